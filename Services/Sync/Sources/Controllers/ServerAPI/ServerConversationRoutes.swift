import Foundation
import Hummingbird
import LayerModels
import LayerServer
import PostgresNIO

/// The Server API's conversations and messages in the system view: every participant, no
/// per-user fields, and changes made by the app itself rather than by one of its users.
extension ServerAPIController {
    /// The body of `POST /apps/:app/conversations`; the Server API has no client-chosen `id`
    /// (it de-duplicates with `If-None-Match` instead).
    struct CreateConversationBody: Decodable {
        var participants: [JSONValue]?
        var distinct: Bool?
        var metadata: JSONValue?
        static let keys: Set<String> = ["participants", "distinct", "metadata"]
    }

    @Sendable func createConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let tag = try RequestTag.read(request)
        let body = try await request.decodeJSON(CreateConversationBody.self, allowedKeys: CreateConversationBody.keys)
        guard let participants = body.participants, !participants.isEmpty else {
            throw APIError(.missingProperty, "A conversation needs participants.", property: "participants")
        }
        let users = try participants.enumerated().map { try userID(named: $1, property: "participants.\($0)") }
        let repositories = service.repositories
        var reserved: UUID?
        if let tag {
            let reservation = try await RequestTag.reserve(
                tag, app: app, collection: .conversations, repository: repositories.requestTags, logger: context.logger)
            if try await repositories.requestTags.resourceExists(
                LayerID(.conversations, reservation.resource), app: app, logger: context.logger)
            {
                return try await repeatedConversation(reservation.resource, app: app, request: request, context: context)
            }
            reserved = reservation.resource
        }
        let new = ConversationRepository.NewConversation(
            id: reserved, participants: users, distinct: body.distinct ?? true, metadata: body.metadata)
        var outcome: ConversationRepository.CreateOutcome
        do {
            outcome = try await repositories.conversations.createConversation(app: app, caller: .app, new, logger: context.logger)
        } catch let error as PSQLError where error.sqlState == "23505" && reserved != nil {
            // A concurrent request with the same tag created it under the reserved id first.
            return try await repeatedConversation(reserved!, app: app, request: request, context: context)
        }
        switch outcome {
        case .idInUse(let id) where id == reserved:
            return try await repeatedConversation(id, app: app, request: request, context: context)
        case .existing(let id) where id == reserved:
            // The distinct conversation that matched is the one a concurrent repeat just made.
            outcome = .created(id)
        default:
            break
        }
        let created = try await service.created(
            outcome, app: app, viewer: nil, urls: service.urls(request), logger: context.logger)
        let id = LayerID(parsing: created.object.id, as: .conversations)?.uuid
        return try Response.created(created, location: id.map { Self.location(app: app, conversation: $0) })
    }

    /// The answer to a repeated `If-None-Match` tag: the conversation created the first time.
    private func repeatedConversation(
        _ id: UUID, app: UUID, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        let object = try await service.conversation(
            app: app, id: id, viewer: nil, urls: service.urls(request), logger: context.logger)
        return try Response.created(.init(object: object, isNew: true), location: Self.location(app: app, conversation: id))
    }

    @Sendable func getConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(
            try await service.conversation(app: app, id: id, viewer: nil, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func patchConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let operations = try await request.decodeLayerPatch()
        try await service.repositories.conversations.patchConversation(
            app: app, caller: .app, id: id, operations: operations, logger: context.logger)
        return Response(status: .noContent)
    }

    /// Deletion by the app is always for everybody; deleting a deleted conversation again succeeds.
    @Sendable func deleteConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await service.repositories.conversations.deleteConversation(
            app: app, caller: .app, id: id, mode: .allParticipants, leave: false, logger: context.logger)
        return Response(status: .noContent)
    }

    // MARK: Messages

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let page = try await service.messages(
            app: app, conversation: id, viewer: nil, paging: try Paging(request, collection: .messages),
            urls: service.urls(request), logger: context.logger)
        return try Response.list(page)
    }

    /// Sends as a user (`sender_id`, or `sender.user_id`), who must be a current participant, or
    /// as a named system sender (`sender.name`), who needs no participation; at once, or later
    /// with a `schedule`.
    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let tag = try RequestTag.read(request)
        let buffer = try await request.jsonBody(limit: Self.maxBatchBytes)
        if buffer.readableBytesView.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[") {
            return try await sendBatch(buffer, tag: tag, app: app, conversation: conversation, request: request, context: context)
        }
        let limit = 256 * 1024
        guard buffer.readableBytes <= limit else {
            throw APIError(.requestTooLarge, "The request body is larger than \(limit) bytes.")
        }
        let body = try Request.decodeJSON(MessageInput.self, from: buffer, allowedKeys: MessageInput.serverKeys)
        let sender = try ServerSender.parse(senderID: body.senderID, sender: body.sender)
        return try await send(
            body, tag: tag, app: app, conversation: conversation, sender: sender.sender, senderProperty: sender.property,
            viewer: nil, request: request, context: context)
    }

    @Sendable func getMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        let message = try await service.message(
            app: app, id: id, viewer: nil, urls: service.urls(request), logger: context.logger)
        guard message.conversation?.id == LayerID(.conversations, conversation).uri else {
            throw APIError.notFound("The message")
        }
        return try Response.json(message)
    }

    /// Deletes a message for every participant.
    @Sendable func deleteMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await service.deleteMessage(app: app, conversation: conversation, id: id, logger: context.logger)
        return Response(status: .noContent)
    }
}

/// The sender of a Server API message or announcement: `sender_id` (an identity id or user id),
/// or `sender` with exactly one of `user_id` and `name` (a non-human sender such as "Support").
struct ServerSender {
    var sender: MessageRepository.Sender
    /// The request property that named it, for errors about it.
    var property: String

    static func parse(senderID: String?, sender: MessageInput.SenderInput?) throws -> ServerSender {
        switch (senderID, sender) {
        case (_?, _?):
            throw APIError.invalid("sender", "Give either sender_id or sender, not both.")
        case (nil, nil):
            throw APIError(
                .missingProperty, "A sender is required: sender_id, or sender with user_id or name.", property: "sender_id")
        case (let id?, nil):
            return ServerSender(sender: .user(try userID(fromText: id, property: "sender_id")), property: "sender_id")
        case (nil, let sender?):
            switch (sender.userID, sender.name) {
            case (let id?, nil):
                return ServerSender(
                    sender: .user(try userID(fromText: id, property: "sender.user_id")), property: "sender.user_id")
            case (nil, let name?):
                return ServerSender(
                    sender: .system(name: try validateName(name, property: "sender.name")), property: "sender.name")
            default:
                throw APIError.invalid("sender", "sender has exactly one of user_id and name.")
            }
        }
    }
}
