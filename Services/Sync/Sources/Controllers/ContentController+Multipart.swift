import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// `POST` of a `multipart/form-data` body to a signed upload URL, as a form or a storage client
/// sends a file (the original's uploads went to Google Cloud Storage, which takes both). The file
/// field's bytes stream into the slot with the limits, quota and checks of a `PUT`; the answer is
/// 200 with the stored object as Cloud Storage describes one.
extension ContentController {
    /// What the form may hold besides the file: its part headers and other fields.
    static let multipartAllowance: Int64 = 64 * 1024

    @Sendable func multipartUpload(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let record = try await signedContent(.upload, request: request, context: context)
        guard let boundary = MultipartFile<RequestBody>.boundary(contentType: request.headers[.contentType]) else {
            throw APIError(
                .invalidRequest, "A POST upload is multipart/form-data with a boundary; or PUT the bytes as they are.",
                data: ["header": "Content-Type"])
        }
        let limit = record.declaredSize + Self.multipartAllowance
        if let text = request.headers[.contentLength], let announced = Int64(text), announced > limit {
            throw APIError(.requestTooLarge, "The form is larger than its file and \(Self.multipartAllowance) bytes allow.")
        }
        guard uploads.acquire(record.uploader) else { throw uploads.busy }
        defer { uploads.release(record.uploader) }
        let file = MultipartFile(base: request.body, boundary: boundary, limit: limit)
        let stored = try await domain.content.store(file, into: record, logger: context.logger)
        let download = domain.content.downloadable(stored, urls: domain.views.urls(request)).downloadURL ?? ""
        return try Response.json(StoredObject(stored, download: download))
    }

    /// An object of Cloud Storage's JSON API, as it answers an upload.
    struct StoredObject: Encodable {
        var kind = "storage#object"
        var id: String
        var name: String
        var bucket = "content"
        var generation: String
        var contentType: String
        /// A decimal string, as Cloud Storage writes it.
        var size: String
        var timeCreated: Date
        var updated: Date
        var mediaLink: String

        init(_ record: ContentRecord, download: String) {
            let uploaded = record.uploadedAt ?? Date()
            generation = String(Int64(uploaded.timeIntervalSince1970 * 1_000_000))
            name = record.id.lowercased
            id = "\(bucket)/\(name)/\(generation)"
            contentType = record.contentType
            size = String(record.size ?? record.declaredSize)
            timeCreated = uploaded
            updated = uploaded
            mediaLink = download
        }
    }
}
