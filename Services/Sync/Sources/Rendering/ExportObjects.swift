import Foundation
import LayerModels
import LayerServer

/// An export as the Server API shows it (the fields of the original product's export object).
struct ExportObject: Encodable, Sendable {
    var id: String
    /// `historical` (asked for with `POST …/exports`) or `scheduled`.
    var type: String
    var status: String
    var events: [String]
    var publicKey: String
    var createdAt: Date
    @Nullable var startedAt: Date?
    @Nullable var completedAt: Date?
    /// When the export and its archive are deleted.
    var expiration: Date
    var statusURL: String
    @Nullable var downloadURL: String?
    @Nullable var downloadURLExpiresAt: Date?
    @Nullable var encryptedAESKey: String?
    @Nullable var aesIV: String?
    /// Bytes of the encrypted archive.
    @Nullable var size: Int64?
    @Nullable var eventCount: Int64?
    /// Why the last attempt failed.
    @Nullable var error: String?

    enum CodingKeys: String, CodingKey {
        case id, type, status, events, expiration, size, error
        case publicKey = "public_key"
        case createdAt = "created_at"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case statusURL = "status_url"
        case downloadURL = "download_url"
        case downloadURLExpiresAt = "download_url_expires_at"
        case encryptedAESKey = "encrypted_aes_key"
        case aesIV = "aes_iv"
        case eventCount = "event_count"
    }

    init(_ record: ExportRecord, app: UUID, urls: URLBuilder) {
        let path = "/apps/\(app.lowercased)/exports/\(record.id.lowercased)"
        let completed = record.status == .completed
        id = LayerID(.exports, record.id).uri
        type = record.type
        status = record.status.rawValue
        events = record.events
        publicKey = record.publicKey
        createdAt = record.createdAt
        startedAt = record.startedAt
        completedAt = record.completedAt
        expiration = record.expiresAt
        statusURL = urls.url(path + "/status")
        downloadURL = completed ? urls.url(path + "/download") : nil
        downloadURLExpiresAt = completed ? record.expiresAt : nil
        encryptedAESKey = completed ? record.encryptedAESKey : nil
        aesIV = completed ? record.aesIV : nil
        size = completed ? record.size : nil
        eventCount = completed ? record.eventCount : nil
        error = record.status == .completed ? nil : record.error
    }
}

/// `GET`/`PUT …/export_schedule`.
struct ExportScheduleObject: Encodable, Sendable {
    var interval: String
    var events: [String]
    @Nullable var nextExportAt: Date?
    @Nullable var lastExportAt: Date?
    @Nullable var lastExportID: String?

    enum CodingKeys: String, CodingKey {
        case interval, events
        case nextExportAt = "next_export_at"
        case lastExportAt = "last_export_at"
        case lastExportID = "last_export_id"
    }

    init(_ schedule: ExportRepository.Schedule?) {
        interval = (schedule?.interval ?? .disabled).rawValue
        events = schedule?.events ?? []
        nextExportAt = schedule?.nextExportAt
        lastExportAt = schedule?.lastExportAt
        lastExportID = schedule?.lastExportID.map { LayerID(.exports, $0).uri }
    }
}

/// `GET`/`PUT …/export_security`.
struct ExportSecurityObject: Encodable, Sendable {
    @Nullable var publicKey: String?

    enum CodingKeys: String, CodingKey {
        case publicKey = "public_key"
    }
}
