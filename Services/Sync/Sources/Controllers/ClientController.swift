import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The Client API of conversations, messages, receipts and identities (session-authenticated).
struct ClientController: Sendable {
    let domain: SyncDomain

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("conversations", use: createConversation)
        router.get("conversations", use: listConversations)
        router.get("conversations/:conversation", use: getConversation)
        router.patch("conversations/:conversation", use: patchConversation)
        router.delete("conversations/:conversation", use: deleteConversation)
        router.post("conversations/:conversation/mark_all_read", use: markAllRead)
        router.get("conversations/:conversation/messages", use: listMessages)
        router.post("conversations/:conversation/messages", use: sendMessage)
        router.get("messages/:message", use: getMessage)
        router.delete("messages/:message", use: deleteMessage)
        router.post("messages/:message/receipts", use: addReceipt)
        router.get("identities/:user", use: getIdentity)
        router.get("search", use: search)
    }

    @Sendable func search(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.search(request, domain.messages, try await domain.userScope(request, context))
    }

    /// `GET /search` for the scope's user, whom the Client API or the Server API names.
    static func search(_ request: Request, _ messages: Messages, _ scope: Scope) async throws -> Response {
        try Response.list(
            try await messages.search(MessageSearch(request), paging: try Paging(request, collection: .messages), scope))
    }

    @Sendable func createConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let body = try await request.decodeJSON(
            Conversations.NewConversationInput.self, allowedKeys: Conversations.NewConversationInput.keys)
        return try Response.created(try await domain.conversations.create(body, scope))
    }

    @Sendable func listConversations(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        return try Response.list(
            try await domain.conversations.list(
                order: try request.conversationOrder(), paging: try Paging(request, collection: .conversations), scope))
    }

    @Sendable func getConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(try await domain.conversations.conversation(id, scope))
    }

    @Sendable func patchConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.patch(id, operations: try await request.decodeLayerPatch(), scope)
        return Response(status: .noContent)
    }

    @Sendable func deleteConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.delete(
            id, mode: try request.deletionMode(), leave: try request.booleanQuery("leave"), scope)
        return Response(status: .noContent)
    }

    @Sendable func markAllRead(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.markAllRead(id, position: try await request.markAllReadPosition(), scope)
        return Response(status: .noContent)
    }

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.list(
            try await domain.messages.list(in: id, paging: try Paging(request, collection: .messages), scope))
    }

    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let body = try await request.decodeJSON(MessageInput.self, limit: 256 * 1024, allowedKeys: MessageInput.clientKeys)
        return try Response.sent(try await domain.messages.send(body, to: conversation, as: .user(scope.user), scope))
    }

    @Sendable func getMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        do {
            return try Response.json(try await domain.messages.message(id, scope))
        } catch let error as APIError where error.body.id == ErrorID.notFound.rawValue {
            // Not a message of a conversation of theirs: perhaps one of a channel they are in.
            guard let message = try await domain.channels.message(id, scope) else { throw error }
            return try Response.json(message)
        }
    }

    /// A message of a conversation (`mode` required) or of a channel (for all its members).
    @Sendable func deleteMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.messages.delete(id, mode: try request.deletionModeIfGiven(), scope)
        return Response(status: .noContent)
    }

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.messages.addReceipt(id, status: try await request.receiptStatus(), scope)
        return Response(status: .noContent)
    }

    @Sendable func getIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let user = try context.parameters.appUserID("user")
        return try Response.json(try await domain.identities.identity(user, scope))
    }
}
