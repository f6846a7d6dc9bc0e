import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What the sync service does with conversations and messages, whatever carries the request: the
/// Client API, the Server API (as the app or as one of its users) and WebSocket requests all call
/// these, with plain values in and the API's objects out; each transport encodes them its way.
struct Messaging: Sendable {
    let repositories: SyncRepositories
    let links: ContentLinks
    /// The base of the URLs in what is pushed to devices, each of which fills in its own.
    let pushURLs: PushURLTemplate
    let identities: IdentityRecorder
    /// Who messaged whom, for the name resolution service's graph.
    let relationships: RelationshipReporter
    let publicBaseURL: String?
    let tls: Bool

    /// A new object, or an existing one that a create found instead (a distinct conversation).
    struct Created<Object: Sendable>: Sendable {
        var object: Object
        var isNew: Bool
    }

    /// The calling user and app of a session-authenticated request; their identity is brought up
    /// to date with the session's claims on the way.
    func caller(_ context: LayerRequestContext) async throws -> (user: String, app: UUID) {
        let session = try context.requireSession()
        try await identities.record(session, logger: context.logger)
        return (session.userID, session.appID)
    }

    /// Where the objects answered to `request` point their URLs: at the Server API's paths for a
    /// request under `/apps/<app>/`, else at the Client API's.
    func urls(_ request: Request) -> URLBuilder {
        var urls = request.urls(publicBaseURL: publicBaseURL, tls: tls)
        let path = request.uri.path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: true)
        if path.count > 1, path[0] == "apps", let segment = String(path[1]).removingPercentEncoding {
            urls.serverAPIApp = LayerID(parsing: segment, as: .apps)?.uuid ?? UUID(uuidString: segment)
        }
        return urls
    }

    func presenter(
        app: UUID, viewer: String?, urls: URLBuilder, _ connection: PostgresConnection, _ logger: Logger
    ) -> Presenter {
        Presenter(app: app, viewer: viewer, urls: urls, links: links, connection: connection, logger: logger)
    }

    /// A conversation as `viewer` sees it (nil: the system view); 404 if they may not.
    func conversation(app: UUID, id: UUID, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> ConversationObject {
        try await repositories.read(logger: logger) { connection in
            let (record, _) = try await repositories.conversations.access(
                app: app, conversation: id, caller: viewer.map(Caller.user) ?? .app, forWriting: false, connection, logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            return try await presenter.conversations([record])[0]
        }
    }

    func message(app: UUID, id: UUID, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> MessageObject {
        try await repositories.read(logger: logger) { connection in
            let (record, _) = try await repositories.messages.visibleMessage(
                app: app, id: id, caller: viewer.map(Caller.user) ?? .app, connection, logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            return try await presenter.messages([record])[0]
        }
    }

    /// The conversation a create came to: the new one, or the distinct one that matched. Throws
    /// 409 `conflict` (with it) when that one has other metadata, or 409 `id_in_use` (with the
    /// conversation if the caller may see it).
    func created(
        _ outcome: ConversationRepository.CreateOutcome, app: UUID, viewer: String?, urls: URLBuilder, logger: Logger
    ) async throws -> Created<ConversationObject> {
        func object(_ id: UUID) async throws -> ConversationObject {
            try await conversation(app: app, id: id, viewer: viewer, urls: urls, logger: logger)
        }
        switch outcome {
        case .created(let id):
            return Created(object: try await object(id), isNew: true)
        case .existing(let id):
            return Created(object: try await object(id), isNew: false)
        case .conflict(let id):
            throw APIError(
                .conflict, "A distinct conversation with these participants exists with other metadata.",
                data: try await jsonValue(object(id)))
        case .idInUse(let id):
            let existing = try? await object(id)
            throw APIError(.idInUse, "The requested conversation id is already in use.", data: try existing.map(jsonValue))
        }
    }

    struct CreateConversationBody: Decodable, Sendable {
        var id: String?
        var participants: [JSONValue]?
        var distinct: Bool?
        var metadata: JSONValue?
        static let keys: Set<String> = ["id", "participants", "distinct", "metadata"]
    }

    /// Creates a conversation for a user (`POST /conversations`, WebSocket `Conversation.create`).
    func createConversation(
        _ body: CreateConversationBody, app: UUID, user: String, urls: URLBuilder, logger: Logger
    ) async throws -> Created<ConversationObject> {
        let new = try ConversationRepository.NewConversation(
            id: LayerID.clientChosen(body.id, as: .conversations),
            participants: (body.participants ?? []).enumerated().map { try userID(named: $1, property: "participants.\($0)") },
            distinct: body.distinct ?? true, metadata: body.metadata)
        let outcome = try await repositories.conversations.createConversation(app: app, caller: .user(user), new, logger: logger)
        return try await created(outcome, app: app, viewer: user, urls: urls, logger: logger)
    }

    /// Sends a message and returns it; 409 `id_in_use` with the earlier message of a repeated id.
    /// A send of the app's backend (`appContent`) may refer to the content it opened for the
    /// conversation.
    func sendMessage(
        _ body: MessageInput, app: UUID, conversation: UUID, sender: MessageRepository.Sender, viewer: String?, urls: URLBuilder,
        appContent: Bool = false, logger: Logger
    ) async throws -> MessageObject {
        let id = try LayerID.clientChosen(body.id, as: .messages) ?? UUID()
        let (parts, notification) = try await checkedSend(
            body, id: id, app: app, sender: sender, appContentOf: appContent ? conversation : nil, logger: logger)
        let outcome = try await repositories.messages.send(
            app: app, conversation: conversation, sender: sender, id: id, parts: parts, notification: notification,
            logger: logger)
        switch outcome {
        case .sent(let sent):
            if let user = sender.userID { relationships.report(app: app, from: user, to: sent.members, kind: .message) }
            // Rendered from what the write returned: a new message has no receipts yet.
            let presenter = Presenter(app: app, viewer: viewer, urls: urls, links: links, connection: nil, logger: logger)
            return presenter.newMessage(sent)
        case .idInUse(let id):
            let existing = try? await message(app: app, id: id, viewer: viewer, urls: urls, logger: logger)
            throw APIError(.idInUse, "The requested message already exists.", data: try existing.map(jsonValue))
        }
    }
}

/// What only the app does, through the Server API.
extension Messaging {
    /// The parts (of message `id`) and the notification of a send, checked, with the rich content
    /// they refer to resolved (see ``ContentRepository/resolveContent(app:owner:parts:appContentOf:logger:)``).
    func checkedSend(
        _ body: MessageInput, id: UUID, app: UUID, sender: MessageRepository.Sender, appContentOf conversation: UUID?,
        logger: Logger
    ) async throws -> (parts: ValidatedParts, notification: JSONValue?) {
        var parts = try PartRules.validate(body.parts, messageID: id)
        if let notification = body.notification, notification != .null {
            guard case .object = notification else { throw APIError.invalid("notification", "notification is an object.") }
        }
        parts = try await repositories.content.resolveContent(
            app: app, owner: sender.userID, parts: parts, appContentOf: conversation, logger: logger)
        return (parts, body.notification == .null ? nil : body.notification)
    }

    /// Fails as a send by `sender` into `conversation` would now: 404 if the conversation is gone
    /// or a sending user was never in it, 403 if they left. A system sender needs no participation.
    func requireSender(_ sender: MessageRepository.Sender, of conversation: UUID, app: UUID, logger: Logger) async throws {
        let members = try await requireConversation(conversation, app: app, logger: logger)
        guard let user = sender.userID else { return }
        guard let own = members.first(where: { $0.userID == user }) else { throw APIError.notFound("The conversation") }
        guard own.isCurrent else {
            throw APIError(.accessDenied, "'\(user)' is no longer a participant of this conversation.")
        }
    }

    /// The participants of a conversation of `app` that is not deleted; 404 otherwise.
    @discardableResult
    func requireConversation(_ conversation: UUID, app: UUID, logger: Logger) async throws -> [ParticipantRecord] {
        try await repositories.read(logger: logger) { connection in
            try await repositories.conversations.access(
                app: app, conversation: conversation, caller: .app, forWriting: false, connection, logger
            ).1
        }
    }

    /// Fails with 422 naming `property` unless `user` is a current participant of `conversation`.
    func requireParticipant(_ user: String, of conversation: UUID, app: UUID, property: String, logger: Logger) async throws {
        let members = try await repositories.read(logger: logger) { connection in
            try await repositories.conversations.access(
                app: app, conversation: conversation, caller: .app, forWriting: false, connection, logger
            ).1
        }
        guard members.contains(where: { $0.userID == user && $0.isCurrent }) else {
            throw APIError.invalid(property, "'\(user)' is not a participant of this conversation.")
        }
    }

    /// Deletes a message of `conversation` for every participant; 404 if it is not one of its messages.
    func deleteMessage(app: UUID, conversation: UUID, id: UUID, logger: Logger) async throws {
        let record = try await repositories.read(logger: logger) { connection in
            try await repositories.messages.visibleMessage(app: app, id: id, caller: .app, connection, logger).0
        }
        guard record.conversationID == conversation else { throw APIError.notFound("The message") }
        try await repositories.messages.deleteMessage(app: app, caller: .app, id: id, mode: .allParticipants, logger: logger)
    }
}

/// The work that the Client API and the Server API's user view share: the same for one user,
/// whether that user is the session's or named in the path.
extension Messaging {
    /// A page of `user`'s conversations.
    func conversations(
        app: UUID, user: String, order: ConversationRepository.ConversationOrder, paging: Paging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<ConversationObject> {
        try await repositories.read(logger: logger) { connection in
            let (records, total) = try await repositories.conversations.conversations(
                app: app, user: user, order: order, fromID: paging.fromID, pageSize: paging.pageSize, connection, logger)
            var presenter = presenter(app: app, viewer: user, urls: urls, connection, logger)
            return Page(items: try await presenter.conversations(records), total: total)
        }
    }

    /// A page of a conversation's messages as `viewer` sees them (nil: all of them), newest first.
    func messages(
        app: UUID, conversation: UUID, viewer: String?, paging: Paging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<MessageObject> {
        try await repositories.read(logger: logger) { connection in
            _ = try await repositories.conversations.access(
                app: app, conversation: conversation, caller: viewer.map(Caller.user) ?? .app, forWriting: false, connection,
                logger)
            let (records, total) = try await repositories.messages.messages(
                app: app, conversation: conversation, viewer: viewer, fromID: paging.fromID, pageSize: paging.pageSize,
                connection, logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            return Page(items: try await presenter.messages(records), total: total)
        }
    }

    /// Everything up to `position` (all of it without one) is read for `user`.
    func markAllRead(app: UUID, user: String, conversation: UUID, position: Int64?, logger: Logger) async throws {
        if let position, position < 0 {
            throw APIError.invalid("position", "position is a message position, 0 or more.")
        }
        try await repositories.messages.markAllRead(
            app: app, user: user, conversation: conversation, position: position, logger: logger)
    }

    func addReceipt(app: UUID, user: String, message: UUID, status: ReceiptStatus, logger: Logger) async throws {
        try await repositories.write(logger: logger) { connection in
            try await repositories.messages.addReceipt(app: app, user: user, message: message, status: status, connection, logger)
        }
    }
}

/// An encodable object as a `JSONValue`, to put it in an error's `data` or a WebSocket response.
func jsonValue(_ value: some Encodable) throws -> JSONValue {
    try LayerJSONDecoder.make().decode(JSONValue.self, from: StreamingJSONEncoder.data(value))
}
