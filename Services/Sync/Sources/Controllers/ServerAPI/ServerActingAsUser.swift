import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API acting as one user, who must exist: reading a message as the user sees it and
/// sending as them, under the rules the Client API applies to that user.
extension ServerAPIController {
    /// The message as the user sees it; 404 where the Client API's `GET /messages/<id>` answers
    /// the user 404.
    @Sendable func getUserMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        return try Response.json(try await domain.messages.message(id, scope))
    }

    /// The messages the user would find with `GET /search`, as they see them.
    @Sendable func searchAsUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await ClientController.search(request, domain.messages, try await domain.actingUserScope(request, context))
    }

    /// Sends `{"parts","notification","schedule"}` as the user: 201 with the message as they see
    /// it, or 202 with a delayed send.
    @Sendable func sendUserMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let tag = try RequestTag.read(request)
        let body = try await request.decodeJSON(MessageInput.self, limit: 256 * 1024, allowedKeys: MessageInput.userKeys)
        return try Response.sent(try await domain.messages.send(body, to: conversation, as: .user(scope.user), tag: tag, scope))
    }
}
