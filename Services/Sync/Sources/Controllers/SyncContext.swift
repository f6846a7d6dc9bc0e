import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What the sync service's controllers share: the store, URL building and the responses that
/// several routes give alike.
struct SyncContext: Sendable {
    let store: SyncStore
    let links: ContentLinks
    let identities: IdentityRecorder
    let publicBaseURL: String?
    let tls: Bool

    /// The calling user and app of a session-authenticated request; their identity is brought up
    /// to date with the session's claims on the way.
    func caller(_ context: LayerRequestContext) async throws -> (user: String, app: UUID) {
        let session = try context.requireSession()
        try await identities.record(session, logger: context.logger)
        return (session.userID, session.appID)
    }

    func urls(_ request: Request) -> URLBuilder {
        request.urls(publicBaseURL: publicBaseURL, tls: tls)
    }

    func presenter(
        app: UUID, viewer: String?, urls: URLBuilder, _ connection: PostgresConnection, _ logger: Logger
    ) -> Presenter {
        Presenter(app: app, viewer: viewer, urls: urls, links: links, connection: connection, logger: logger)
    }

    /// A conversation as `viewer` sees it (nil: the system view); 404 if they may not.
    func conversationObject(
        app: UUID, id: UUID, viewer: String?, request: Request, context: LayerRequestContext
    ) async throws -> ConversationObject {
        let urls = urls(request)
        return try await store.read(logger: context.logger) { connection in
            let (record, _) = try await store.access(
                app: app, conversation: id, caller: viewer.map(Caller.user) ?? .app, forWriting: false, connection,
                context.logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, context.logger)
            return try await presenter.conversations([record])[0]
        }
    }

    func messageObject(
        app: UUID, id: UUID, viewer: String?, request: Request, context: LayerRequestContext
    ) async throws -> MessageObject {
        let urls = urls(request)
        return try await store.read(logger: context.logger) { connection in
            let (record, _) = try await store.visibleMessage(
                app: app, id: id, caller: viewer.map(Caller.user) ?? .app, connection, context.logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, context.logger)
            return try await presenter.messages([record])[0]
        }
    }

    /// The answer to a conversation create: 201 with the new one, 200 with the distinct one that
    /// matched, 409 `conflict` with it when its metadata differ, or 409 `id_in_use` (with the
    /// conversation if the caller may see it).
    func conversationResponse(
        _ outcome: SyncStore.CreateOutcome, app: UUID, viewer: String?, request: Request, context: LayerRequestContext,
        location: (UUID) -> String? = { _ in nil }
    ) async throws -> Response {
        func object(_ id: UUID) async throws -> ConversationObject {
            try await conversationObject(app: app, id: id, viewer: viewer, request: request, context: context)
        }
        switch outcome {
        case .created(let id):
            var response = try Response.json(try await object(id), status: .created)
            if let location = location(id) { response.headers[.location] = location }
            return response
        case .existing(let id):
            var response = try Response.json(try await object(id), status: .ok)
            if let location = location(id) { response.headers[.location] = location }
            return response
        case .conflict(let id):
            throw APIError(
                .conflict, "A distinct conversation with these participants exists with other metadata.",
                data: try await jsonValue(object(id)))
        case .idInUse(let id):
            let existing = try? await object(id)
            throw APIError(.idInUse, "The requested conversation id is already in use.", data: try existing.map(jsonValue))
        }
    }

    struct CreateConversationBody: Decodable {
        var id: String?
        var participants: [JSONValue]?
        var distinct: Bool?
        var metadata: JSONValue?
        static let keys: Set<String> = ["id", "participants", "distinct", "metadata"]
    }

    /// Creates a conversation for a user (`POST /conversations`, WebSocket `Conversation.create`).
    func createConversation(
        _ body: CreateConversationBody, app: UUID, user: String, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        let new = try SyncStore.NewConversation(
            id: clientChosenID(body.id, as: .conversations),
            participants: (body.participants ?? []).enumerated().map { try userID(named: $1, property: "participants.\($0)") },
            distinct: body.distinct ?? true, metadata: body.metadata)
        let outcome = try await store.createConversation(app: app, caller: .user(user), new, logger: context.logger)
        return try await conversationResponse(outcome, app: app, viewer: user, request: request, context: context)
    }

    /// Sends a message and answers 201 with it, or 409 `id_in_use` with the earlier message.
    func sendMessage(
        _ body: MessageInput, app: UUID, conversation: UUID, sender: SyncStore.Sender, viewer: String?, request: Request,
        context: LayerRequestContext
    ) async throws -> Response {
        let id = try clientChosenID(body.id, as: .messages) ?? UUID()
        var parts = try PartRules.validate(body.parts, messageID: id)
        if let notification = body.notification, notification != .null {
            guard case .object = notification else { throw APIError.invalid("notification", "notification is an object.") }
        }
        parts = try await store.resolveContent(app: app, owner: sender.userID, parts: parts, logger: context.logger)
        let outcome = try await store.send(
            app: app, conversation: conversation, sender: sender, id: id, parts: parts,
            notification: body.notification == .null ? nil : body.notification, logger: context.logger)
        switch outcome {
        case .sent(let sent):
            // Rendered from what the write returned: a new message has no receipts yet.
            let presenter = Presenter(
                app: app, viewer: viewer, urls: urls(request), links: links, connection: nil, logger: context.logger)
            return try Response.json(presenter.newMessage(sent), status: .created)
        case .idInUse(let id):
            let existing = try? await messageObject(app: app, id: id, viewer: viewer, request: request, context: context)
            throw APIError(.idInUse, "The requested message already exists.", data: try existing.map(jsonValue))
        }
    }
}

/// The routes that the Client API and the Server API's user view share: the same work for one
/// user, whether that user is the session's or named in the path.
extension SyncContext {
    /// A page of `user`'s conversations (`page_size`, `from_id`, `sort_by`) with `Layer-Count`.
    func conversationList(app: UUID, user: String, request: Request, context: LayerRequestContext) async throws -> Response {
        let paging = try Paging(request, collection: .conversations)
        let sort = request.uri.queryParameters["sort_by"].map(String.init) ?? SyncStore.ConversationOrder.createdAt.rawValue
        guard let order = SyncStore.ConversationOrder(rawValue: sort) else {
            throw APIError.invalid("sort_by", "sort_by is created_at or last_message.")
        }
        let urls = urls(request)
        return try await store.read(logger: context.logger) { connection in
            let (records, total) = try await store.conversations(
                app: app, user: user, order: order, fromID: paging.fromID, pageSize: paging.pageSize, connection,
                context.logger)
            var presenter = presenter(app: app, viewer: user, urls: urls, connection, context.logger)
            return try Response.list(try await presenter.conversations(records), total: total)
        }
    }

    /// A page of a conversation's messages as `viewer` sees them (nil: all of them), newest first.
    func messageList(
        app: UUID, conversation: UUID, viewer: String?, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        let paging = try Paging(request, collection: .messages)
        let urls = urls(request)
        return try await store.read(logger: context.logger) { connection in
            _ = try await store.access(
                app: app, conversation: conversation, caller: viewer.map(Caller.user) ?? .app, forWriting: false, connection,
                context.logger)
            let (records, total) = try await store.messages(
                app: app, conversation: conversation, viewer: viewer, fromID: paging.fromID, pageSize: paging.pageSize,
                connection, context.logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, context.logger)
            return try Response.list(try await presenter.messages(records), total: total)
        }
    }

    struct MarkAllReadBody: Decodable {
        var position: Int64?
    }

    /// `mark_all_read {"position"}`: 204.
    func markAllRead(
        app: UUID, user: String, conversation: UUID, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        let body = try await request.decodeOptionalJSON(MarkAllReadBody.self)
        if let position = body?.position, position < 0 {
            throw APIError.invalid("position", "position is a message position, 0 or more.")
        }
        try await store.markAllRead(app: app, user: user, conversation: conversation, position: body?.position, logger: context.logger)
        return Response(status: .noContent)
    }

    struct ReceiptBody: Decodable {
        var type: String
    }

    /// A receipt `{"type":"delivery"|"read"}`: 204.
    func addReceipt(app: UUID, user: String, message: UUID, request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(ReceiptBody.self, allowedKeys: ["type"])
        guard let status = ReceiptStatus(name: body.type), status > .sent else {
            throw APIError.invalid("type", "A receipt's type is 'delivery' or 'read'.")
        }
        try await store.write(logger: context.logger) { connection in
            try await store.addReceipt(app: app, user: user, message: message, status: status, connection, context.logger)
        }
        return Response(status: .noContent)
    }
}

/// An encodable object as a `JSONValue`, to put it in an error's `data`.
func jsonValue(_ value: some Encodable) throws -> JSONValue {
    try LayerJSONDecoder.make().decode(JSONValue.self, from: LayerJSONEncoder.make().encode(value))
}
