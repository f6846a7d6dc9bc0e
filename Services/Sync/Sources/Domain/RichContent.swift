import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore

/// Rich content: upload slots opened by a user or by the app's backend for a conversation, the
/// bytes stored as they arrive and read back a chunk at a time, the signed links that stand in
/// for a session, and the parts of what is sent that refer to content.
struct RichContent: Sendable {
    struct Settings: Sendable {
        /// How much content one user (or the app, per conversation) may keep stored.
        var quotaBytes: Int64
    }

    private let repositories: SyncRepositories
    private let views: Views
    private let conversations: Conversations
    private let settings: Settings

    init(repositories: SyncRepositories, views: Views, conversations: Conversations, settings: Settings) {
        self.repositories = repositories
        self.views = views
        self.conversations = conversations
        self.settings = settings
    }

    // MARK: What is sent

    /// The checked parts and notification of something sent (message `id`, an announcement), with
    /// the content its parts refer to resolved: `sender`'s own uploads, or with `appContentOf`
    /// what the app's backend opened for that conversation.
    struct Outgoing: Sendable {
        var parts: ValidatedParts
        var notification: JSONValue?
    }

    func prepare(
        _ body: MessageInput, id: UUID, sender: MessageRepository.Sender, appContentOf conversation: UUID?, _ scope: Scope
    ) async throws -> Outgoing {
        let parts = try PartRules.validate(body.parts, messageID: id)
        let notification = try Self.notification(body.notification)
        var resolved = try await resolve(parts, owner: sender.userID, appContentOf: conversation, scope)
        resolved.offTheRecord = body.offTheRecord ?? false
        if sender.userID == nil, let response = try MessageResponse.find(in: resolved.parts) {
            throw APIError.invalid(response.property, "A response is a user's answer; the system sends none.")
        }
        if resolved.offTheRecord, MessageResponse.isResponse(resolved.parts) {
            throw APIError.invalid(
                "off_the_record",
                "A response updates the message it answers, which the server must read: it is never off the record.")
        }
        return Outgoing(parts: resolved, notification: notification)
    }

    /// A notification as sent: an object, or none (null).
    static func notification(_ value: JSONValue?) throws -> JSONValue? {
        guard let value, value != .null else { return nil }
        guard case .object = value else { throw APIError.invalid("notification", "notification is an object.") }
        return value
    }

    /// `parts` with the content they refer to resolved (see
    /// ``ContentRepository/resolveContent(app:owner:parts:appContentOf:logger:)``).
    func resolve(
        _ parts: ValidatedParts, owner: String?, appContentOf conversation: UUID? = nil, _ scope: Scope
    ) async throws -> ValidatedParts {
        try await repositories.content.resolveContent(
            app: scope.app, owner: owner, parts: parts, appContentOf: conversation, logger: scope.logger)
    }

    // MARK: Slots

    /// What a new slot is for: the `Upload-*` headers of its request.
    struct Slot: Sendable {
        var contentType: String
        var declaredSize: Int64
        /// The web origin whose pages will use its signed links, if any.
        var origin: String?
    }

    /// Opens an upload slot: a user's own, or the app backend's for `conversation` (which must
    /// exist, before anything of `slot` is looked at). Answers it with its signed upload URL and
    /// no download URL yet, and where it is refreshed.
    func open(
        _ slot: @autoclosure () throws -> Slot, for conversation: UUID? = nil, _ scope: Scope
    ) async throws -> (object: ContentObject, location: String) {
        let owner: String
        if let conversation {
            try await conversations.requireExisting(conversation, scope)
            owner = ContentRecord.appOwner
        } else {
            owner = scope.user
        }
        let slot = try slot()
        let record = try await repositories.content.createContent(
            app: scope.app, owner: owner, conversation: conversation, contentType: slot.contentType,
            declaredSize: slot.declaredSize, uploadOrigin: slot.origin, quota: settings.quotaBytes, logger: scope.logger)
        let object = ContentObject(
            id: LayerID(.content, record.id).uri, size: record.declaredSize, downloadURL: nil, expiration: nil,
            refreshURL: refreshURL(record, urls: scope.urls),
            uploadURL: views.links.url(.upload, content: record.id, urls: scope.urls).url)
        let location =
            conversation.map { ServerAPIPath.content(app: scope.app, conversation: $0, record.id) }
            ?? "/content/\(record.id.lowercased)"
        return (object, location)
    }

    /// Uploaded content as the scope's caller may read it, with a fresh download URL: a user's
    /// content they may see, or (with `conversation`) the app's content of that conversation.
    func content(_ id: UUID, of conversation: UUID? = nil, _ scope: Scope) async throws -> ContentObject {
        let record: ContentRecord
        if let conversation {
            record = try await repositories.content.conversationContent(
                app: scope.app, conversation: conversation, id: id, logger: scope.logger)
        } else {
            record = try await repositories.content.visibleContent(
                app: scope.app, id: id, viewer: scope.user, logger: scope.logger)
        }
        return downloadable(record, urls: scope.urls)
    }

    // MARK: Signed links

    /// The content of a signed link, once `expires` and `signature` prove the link was issued for
    /// this purpose and has not expired (403 otherwise); 404 if it is gone.
    func signed(
        _ purpose: ContentLinks.Purpose, _ id: UUID, expires: String?, signature: String?, logger: Logger
    ) async throws -> ContentRecord {
        guard views.links.verify(purpose, content: id, expires: expires, signature: signature) else {
            throw APIError(.accessDenied, "This \(purpose.rawValue) link is invalid or has expired; ask for a new one.")
        }
        guard let record = try await repositories.content.content(id: id, logger: logger) else {
            throw APIError.notFound("The content")
        }
        return record
    }

    /// Stores the bytes of an upload as they arrive; content cannot be replaced.
    func store<Bytes: AsyncSequence & Sendable>(
        _ body: Bytes, into record: ContentRecord, logger: Logger
    ) async throws -> ContentRecord where Bytes.Element == ByteBuffer {
        try await repositories.content.storeUpload(content: record.id, body: body, logger: logger)
    }

    /// The stored chunks of uploaded content, one at a time as the reader takes them.
    func chunks(of record: ContentRecord, logger: Logger) -> ContentChunks {
        ContentChunks(repository: repositories.content, content: record.id, logger: logger)
    }

    /// The content object of uploaded content, with a fresh signed download URL.
    func downloadable(_ record: ContentRecord, urls: URLBuilder) -> ContentObject {
        let link = views.links.url(.download, content: record.id, urls: urls)
        return ContentObject(
            id: LayerID(.content, record.id).uri, size: record.size ?? record.declaredSize, downloadURL: link.url,
            expiration: link.expiration, refreshURL: refreshURL(record, urls: urls), uploadURL: nil)
    }

    /// Where the one who opened the slot refreshes it: the Server API's path for the app's
    /// backend, the Client API's for a user.
    private func refreshURL(_ record: ContentRecord, urls: URLBuilder) -> String {
        guard record.ownerID == ContentRecord.appOwner, let conversation = record.conversationID else {
            return urls.content(record.id)
        }
        return urls.url(ServerAPIPath.content(app: record.appID, conversation: conversation, record.id))
    }
}

/// The chunks of stored content in order; a missing one ends the read with an error (the
/// response's headers are gone by then: all that is left is to cut it short).
struct ContentChunks: Sendable {
    let repository: ContentRepository
    let content: UUID
    let logger: Logger

    func chunk(_ ordinal: Int32) async throws -> ByteBuffer {
        guard let chunk = try await repository.contentChunk(content: content, ordinal: ordinal, logger: logger) else {
            logger.error("Stored content is missing a chunk", metadata: ["content": "\(content)", "ordinal": "\(ordinal)"])
            throw APIError(.internalServerError, "Stored content is incomplete.")
        }
        return chunk
    }
}
