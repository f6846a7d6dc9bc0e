import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// The Server API's conversations and messages in the system view: every participant, no
/// per-user fields, and changes made by the app itself rather than by one of its users.
extension ServerAPIController {
    @Sendable func createConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let tag = try RequestTag.read(request)
        let body = try await request.decodeJSON(
            Conversations.NewConversationInput.self, allowedKeys: Conversations.NewConversationInput.serverKeys)
        let created = try await domain.conversations.create(body, tag: tag, scope)
        let id = LayerID(parsing: created.object.id, as: .conversations)?.uuid
        return try Response.created(created, location: id.map { ServerAPIPath.conversation(app: scope.app, $0) })
    }

    @Sendable func getConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(try await domain.conversations.conversation(id, scope))
    }

    @Sendable func patchConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.patch(id, operations: try await request.decodeLayerPatch(), scope)
        return Response(status: .noContent)
    }

    /// Deletion by the app is always for everybody; deleting a deleted conversation again succeeds.
    @Sendable func deleteConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.delete(id, mode: .allParticipants, leave: false, scope)
        return Response(status: .noContent)
    }

    // MARK: Messages

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.list(
            try await domain.messages.list(in: id, paging: try Paging(request, collection: .messages), scope))
    }

    /// Sends as a user (`sender_id`, or `sender.user_id`), who must be a current participant, or
    /// as a named system sender (`sender.name`), who needs no participation; at once, or later
    /// with a `schedule` (202, the delayed send; see ``ScheduledSender``). A JSON array is a batch
    /// (``sendBatch(_:tag:conversation:scope:)``). `If-None-Match` makes either safe to repeat.
    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let tag = try RequestTag.read(request)
        let buffer = try await request.jsonBody(limit: Self.maxBatchBytes)
        if buffer.readableBytesView.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "[") {
            return try await sendBatch(buffer, tag: tag, conversation: conversation, scope: scope)
        }
        let limit = 256 * 1024
        guard buffer.readableBytes <= limit else {
            throw APIError(.requestTooLarge, "The request body is larger than \(limit) bytes.")
        }
        let body = try Request.decodeJSON(MessageInput.self, from: buffer, allowedKeys: MessageInput.serverKeys)
        let sender = try ServerSender.parse(senderID: body.senderID, sender: body.sender)
        return try Response.sent(
            try await domain.messages.send(
                body, to: conversation, as: sender.sender, tag: tag, senderProperty: sender.property, scope))
    }

    @Sendable func getMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        return try Response.json(try await domain.messages.message(id, in: conversation, scope))
    }

    /// Deletes a message for every participant.
    @Sendable func deleteMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.messages.delete(id, in: conversation, mode: .allParticipants, scope)
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
