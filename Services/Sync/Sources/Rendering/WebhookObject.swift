import Foundation
import LayerModels
import LayerServer

/// A webhook as the webhooks API shows it: its id (`layer:///apps/<app>/webhooks/<uuid>`) and url,
/// what it listens to and where, its status (with `status_reason` once inactive), and the app's
/// `config`. The secret is never shown again.
struct WebhookObject: Encodable, Sendable {
    var id: String
    var url: String
    var version: String
    var targetURL: String
    var events: [String]
    var status: String
    var statusReason: String?
    var createdAt: Date
    var config: [String: String]?

    enum CodingKeys: String, CodingKey {
        case id, url, version, events, status, config
        case targetURL = "target_url"
        case statusReason = "status_reason"
        case createdAt = "created_at"
    }

    init(_ record: WebhookRecord, urls: URLBuilder) {
        let app = record.appID.lowercased
        id = "layer:///apps/\(app)/webhooks/\(record.id.lowercased)"
        url = urls.url("/apps/\(app)/webhooks/\(record.id.lowercased)")
        version = record.version
        targetURL = record.targetURL
        events = record.events
        status = record.status.rawValue
        statusReason = record.status == .inactive ? record.statusReason : nil
        createdAt = record.createdAt
        config = record.config
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(url, forKey: .url)
        try container.encode(version, forKey: .version)
        try container.encode(targetURL, forKey: .targetURL)
        try container.encode(events, forKey: .events)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(statusReason, forKey: .statusReason)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(config, forKey: .config)
    }
}
