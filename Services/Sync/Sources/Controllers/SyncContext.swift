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

/// An encodable object as a `JSONValue`, to put it in an error's `data`.
func jsonValue(_ value: some Encodable) throws -> JSONValue {
    try LayerJSONDecoder.make().decode(JSONValue.self, from: LayerJSONEncoder.make().encode(value))
}
