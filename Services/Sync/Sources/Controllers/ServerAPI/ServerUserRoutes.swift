import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API on one user (`/apps/:app/users/:user…`): the user with their suspension and
/// sessions, their view of conversations and messages (with unread counts and last messages,
/// without what they deleted from their devices), their receipts and deletions, their identity
/// and their blocks. The user must exist, except when their identity is being created.
extension ServerAPIController {
    // MARK: The user

    @Sendable func getUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.users.user(try context.parameters.appUserID("user"), scope))
    }

    /// Suspends or reinstates the user and changes their blocks, after checking every operation: a
    /// body with one bad operation changes nothing. 202, or 204 when every operation was a block
    /// of the user themselves (which changes nothing).
    @Sendable func updateUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let user = try context.parameters.appUserID("user")
        let patch = try UserPatch(try await request.decodeLayerPatch(limit: 1024 * 1024), user: user)
        try await domain.users.update(user, patch, scope)
        return Response(status: patch.onlyBlocksOfThemselves ? .noContent : .accepted)
    }

    @Sendable func endSessions(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        try await domain.users.endSessions(try context.parameters.appUserID("user"), scope)
        return Response(status: .noContent)
    }

    @Sendable func challenge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        try await domain.users.challenge(try context.parameters.appUserID("user"), scope)
        return Response(status: .noContent)
    }

    // MARK: The user's view

    @Sendable func listUserConversations(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        return try Response.list(
            try await domain.conversations.list(
                order: try request.conversationOrder(), paging: try Paging(request, collection: .conversations), scope))
    }

    @Sendable func getUserConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(try await domain.conversations.conversation(id, scope))
    }

    @Sendable func markAllRead(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await domain.conversations.markAllRead(id, position: try await request.markAllReadPosition(), scope)
        return Response(status: .noContent)
    }

    @Sendable func listUserMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.list(
            try await domain.messages.list(in: id, paging: try Paging(request, collection: .messages), scope))
    }

    // MARK: Acting as the user

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.messages.addReceipt(id, status: try await request.receiptStatus(), scope)
        return Response(status: .noContent)
    }

    /// `mode=my_devices` hides the message from the user; `mode=all_participants` deletes it for
    /// everybody, which only its sender may do (as the Client API's `DELETE /messages/<id>`).
    @Sendable func deleteUserMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.messages.delete(id, mode: try request.deletionModeIfGiven(), scope)
        return Response(status: .noContent)
    }

    // MARK: Identity

    /// Creates the user's identity: 201 with no body, 409 `conflict` (with the identity) when the
    /// user has one already, made by the backend, a session or a conversation they are in.
    @Sendable func createIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let user = try context.parameters.appUserID("user")
        let input = try await request.decodeJSON(IdentityInput.self, allowedKeys: IdentityInput.keys)
        try await domain.identities.create(input, for: user, scope)
        return Response(status: .created)
    }

    @Sendable func getIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.identities.identity(try context.parameters.appUserID("user"), scope))
    }

    /// Replaces every field of the identity (absent ones become empty); `display_name` is required.
    @Sendable func replaceIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let user = try context.parameters.appUserID("user")
        let input = try await request.decodeJSON(IdentityInput.self, allowedKeys: IdentityInput.keys)
        try await domain.identities.replace(input, for: user, scope)
        return Response(status: .noContent)
    }

    @Sendable func patchIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let user = try context.parameters.appUserID("user")
        try await domain.identities.patch(user, operations: try await request.decodeLayerPatch(), scope)
        return Response(status: .noContent)
    }

    @Sendable func deleteIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        try await domain.identities.delete(try context.parameters.appUserID("user"), scope)
        return Response(status: .noContent)
    }

    // MARK: Blocks

    /// The users `owner` blocks: identities, or in 1.x `[{"user_id"}]`.
    @Sendable func listBlocks(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let blocked = try await domain.blocks.blocked(try await domain.actingUserScope(request, context))
        guard APIVersion.current.usesIdentities else {
            return try Response.json(blocked.map { ["user_id": $0.userID] })
        }
        return try Response.json(blocked)
    }

    /// The body of a block: the blocked user as `user_id` or as identity `id`.
    struct BlockBody: Decodable {
        var userID: String?
        var id: String?
        enum CodingKeys: String, CodingKey {
            case id
            case userID = "user_id"
        }
        static let keys: Set<String> = ["id", "user_id"]
    }

    /// Blocks the user named by `user_id` or by identity `id` (exactly one of them). Blocking
    /// oneself answers 204 like any block, and changes nothing.
    @Sendable func addBlock(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let body = try await request.decodeJSON(BlockBody.self, allowedKeys: BlockBody.keys)
        let blocked: String
        switch (body.userID, body.id) {
        case (let user?, nil): blocked = try userID(fromText: user, property: "user_id")
        case (nil, let id?): blocked = try userID(fromText: id, property: "id")
        case (nil, nil): throw APIError(.missingProperty, "Name the user to block by user_id or id.", property: "user_id")
        case (_?, _?): throw APIError.invalid("id", "Name the user to block by user_id or by id, not both.")
        }
        try await domain.blocks.block(blocked, scope)
        return Response(status: .noContent)
    }

    @Sendable func removeBlock(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        // The blocked user is named by user id or (URL-encoded) identity id.
        let blocked = try userID(fromText: try context.parameters.appUserID("blocked"), property: "user_id")
        try await domain.blocks.unblock(blocked, scope)
        return Response(status: .noContent)
    }
}
