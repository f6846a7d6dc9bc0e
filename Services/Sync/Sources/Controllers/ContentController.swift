import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer
import Logging
import NIOCore
import Synchronization

/// Rich content: `POST /content` opens an upload slot, the signed upload URL takes the bytes,
/// `GET /content/:id` hands out a fresh download URL, and the signed download URL serves them.
///
/// Bytes are never held whole: the upload is written to the database row by row as it arrives,
/// and the download reads one row at a time as the client takes it.
struct ContentController: Sendable {
    let domain: SyncDomain
    let settings: SyncSettings
    let uploads: UploadSlots
    /// Who may use the signed URLs from a browser besides the upload's own origin.
    let origins: AllowedOrigins
    var maxBytes: Int { settings.maxContentBytes }

    /// Session-authenticated routes.
    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("content", use: create)
        router.get("content/:content", use: get)
    }

    /// Routes authenticated by their signed URL instead of a session; they need no `Accept`
    /// header, so a browser or curl can use them as they are.
    func addSignedRoutes(to router: LimitedRoutes) {
        // An upload reads its body as it arrives and bounds each read itself (``UploadSlots``):
        // a deadline for the whole request would cut a large transfer short.
        let uploads = router.with(.streaming)
        uploads.put("content/:content/upload", use: upload)
        uploads.post("content/:content/upload", use: multipartUpload)
        router.get("content/:content/download", use: download)
        // Preflights a browser sends before the upload (its `Upload-*` headers need one) and a
        // download with headers, from the page the upload was opened for.
        router.on("content/:content/upload", method: .options) { request, context in
            try await preflight(.upload, request: request, context: context)
        }
        router.on("content/:content/download", method: .options) { request, context in
            try await preflight(.download, request: request, context: context)
        }
    }

    // MARK: Session routes

    @Sendable func create(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        return try Self.slotCreated(try await domain.content.open(try slot(request), scope))
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("content", as: .content).uuid
        return try Response.json(try await domain.content.content(id, scope))
    }

    // MARK: Signed routes

    @Sendable func upload(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let record = try await signedContent(.upload, request: request, context: context)
        guard !record.isUploaded else {
            throw APIError(.invalidOperation, "This content was uploaded already; content cannot be replaced.")
        }
        // A length announced up front that cannot match is refused before reading anything.
        if let text = request.headers[.contentLength], let announced = Int64(text), announced != record.declaredSize {
            throw ContentRepository.lengthMismatch(declared: record.declaredSize, received: announced)
        }
        // A slow upload holds no database connection, but it does hold memory and a socket: each
        // user (and the app's backend, for each conversation) gets a few at a time. (The server
        // closes a connection whose body stalls.)
        guard uploads.acquire(record.uploader) else { throw uploads.busy }
        defer { uploads.release(record.uploader) }
        let stored = try await domain.content.store(request.body, into: record, logger: context.logger)
        return try Response.json(domain.content.downloadable(stored, urls: domain.views.urls(request)))
    }

    @Sendable func download(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let record = try await signedContent(.download, request: request, context: context)
        guard record.isUploaded, let size = record.size else { throw APIError.notFound("The content") }
        let chunks = domain.content.chunks(of: record, logger: context.logger)
        let body = ResponseBody(contentLength: Int(size)) { writer in
            var written: Int64 = 0
            var ordinal: Int32 = 0
            while written < size {
                let chunk = try await chunks.chunk(ordinal)
                written += Int64(chunk.readableBytes)
                ordinal += 1
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            // Whatever type the uploader claimed, a browser saves the bytes rather than rendering
            // them on our origin, does not guess another type, and would run nothing if it did.
            headers: [
                .contentType: record.contentType, .cacheControl: "private, no-transform",
                .contentDisposition: "attachment", .xContentTypeOptions: "nosniff",
                .contentSecurityPolicy: "sandbox; default-src 'none'",
            ],
            body: body)
    }

    // MARK: Helpers

    /// The slot the `Upload-*` headers of `request` describe.
    func slot(_ request: Request) throws -> RichContent.Slot {
        let contentType = try requiredHeader(.uploadContentType, in: request)
        try PartRules.validateMIMEType(contentType, property: HTTPField.Name.uploadContentType.rawName)
        let declared = try declaredLength(request)
        // An empty one is what the SDKs send where a page has no origin: none.
        let origin = try request.headers[.uploadOrigin].flatMap { $0.isEmpty ? nil : try validateOrigin($0) }
        return RichContent.Slot(contentType: contentType, declaredSize: declared, origin: origin)
    }

    /// 201 with a new slot.
    static func slotCreated(_ slot: (object: ContentObject, location: String)) throws -> Response {
        var response = try Response.json(slot.object, status: .created)
        response.headers[.location] = slot.location
        return response
    }

    /// The content of a signed route (403 unless `expires` and `signature` prove the URL was
    /// issued for this purpose and has not expired, 404 if it is gone). Pages on its upload origin,
    /// and on the origins its app allows, may read the answer.
    func signedContent(
        _ purpose: ContentLinks.Purpose, request: Request, context: LayerRequestContext
    ) async throws -> ContentRecord {
        let id = try context.parameters.layerID("content", as: .content).uuid
        let query = request.uri.queryParameters
        let record = try await domain.content.signed(
            purpose, id, expires: query["expires"].map(String.init), signature: query["signature"].map(String.init),
            logger: context.logger)
        context.crossOrigin.madeFor(app: record.appID)
        if let origin = record.uploadOrigin { context.crossOrigin.allow(origin: origin) }
        return record
    }

    /// A preflight of a signed route from a page on the content's upload origin, or on one its
    /// app allows (the others are answered before they get here).
    private func preflight(
        _ purpose: ContentLinks.Purpose, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        // An OPTIONS that is no preflight asks what the URL serves.
        guard CrossOrigin.isPreflight(request), let origin = request.headers[.origin] else {
            return Response(status: .noContent, headers: [.allow: "GET, HEAD, PUT, POST, OPTIONS"])
        }
        let record = try await signedContent(purpose, request: request, context: context)
        var allowed = record.uploadOrigin.flatMap(OriginRule.init)?.matches(origin) ?? false
        if !allowed { allowed = await origins.allows(origin, app: record.appID, logger: context.logger) }
        guard allowed else {
            throw APIError(.accessDenied, "Pages on \(origin.prefix(200)) may not use this content's links.")
        }
        return CrossOrigin.preflight(request, origin: origin)
    }

    private func requiredHeader(_ name: HTTPField.Name, in request: Request) throws -> String {
        guard let value = request.headers[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            throw APIError(.missingProperty, "The header \(name.rawName) is required.", property: name.rawName)
        }
        return value
    }

    /// `Upload-Content-Length`: a whole number of bytes above zero, at most `maxBytes` (413 above).
    private func declaredLength(_ request: Request) throws -> Int64 {
        let name = HTTPField.Name.uploadContentLength.rawName
        let text = try requiredHeader(.uploadContentLength, in: request)
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }), text.contains(where: { $0 != "0" }) else {
            throw APIError.invalid(name, "\(name) is a whole number of bytes above zero.")
        }
        // Digits too many for a 64-bit number are a length far over any limit, not a malformed one.
        guard let length = Int64(text), length <= Int64(maxBytes) else {
            throw APIError(
                .requestTooLarge, "Content is at most \(maxBytes) bytes; \(text) were declared.", property: name,
                extra: ["max_bytes": .number(Double(maxBytes))])
        }
        return length
    }

    /// `Upload-Origin`: the web origin whose pages will upload and download the content
    /// (`https://host[:port]`); they may use its signed URLs from the browser, which the
    /// signatures authorize.
    private func validateOrigin(_ origin: String) throws -> String {
        let name = HTTPField.Name.uploadOrigin.rawName
        // A trailing slash (a page's URL cut at its path) is still the origin.
        let trimmed = origin.hasSuffix("/") ? String(origin.dropLast()) : origin
        guard let rule = OriginRule(trimmed), rule.isOneOrigin else {
            throw APIError.invalid(name, "\(name) is a web origin such as https://example.com.")
        }
        return rule.description
    }
}

/// Uploads in progress per owner, on this replica.
final class UploadSlots: Sendable {
    let limit: Int
    private let inProgress = Mutex<[String: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes a slot of `owner`; false when all of theirs are taken.
    func acquire(_ owner: String) -> Bool {
        inProgress.withLock { counts in
            guard counts[owner, default: 0] < limit else { return false }
            counts[owner, default: 0] += 1
            return true
        }
    }

    func release(_ owner: String) {
        inProgress.withLock { counts in
            let left = counts[owner, default: 1] - 1
            counts[owner] = left > 0 ? left : nil
        }
    }

    /// 429 while all of an owner's slots are taken.
    var busy: APIError {
        APIError(
            .rateLimitExceeded, "You have \(limit) uploads in progress already; finish one first.",
            headers: [.retryAfter: "5"])
    }
}

extension HTTPField.Name {
    static let uploadContentType = Self("Upload-Content-Type")!
    static let uploadContentLength = Self("Upload-Content-Length")!
    static let uploadOrigin = Self("Upload-Origin")!
}

extension HTTPField.Name {
    static let xContentTypeOptions = Self("X-Content-Type-Options")!
    static let contentSecurityPolicy = Self("Content-Security-Policy")!
}
