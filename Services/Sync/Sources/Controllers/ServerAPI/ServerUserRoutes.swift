import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API on behalf of one user (`/apps/:app/users/:user/…`): their view of
/// conversations and messages (with unread counts and last messages, without what they deleted
/// from their devices), their receipts and deletions, their identity and their blocks. The user
/// must exist, except when their identity is being created.
extension ServerAPIController {
    // MARK: The user's view

    @Sendable func listUserConversations(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let page = try await service.conversations(
            app: app, user: user, order: try request.conversationOrder(), paging: try Paging(request, collection: .conversations),
            urls: service.urls(request), logger: context.logger)
        return try Response.list(page)
    }

    @Sendable func getUserConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(
            try await service.conversation(app: app, id: id, viewer: user, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func markAllRead(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let position = try await request.markAllReadPosition()
        try await service.markAllRead(app: app, user: user, conversation: id, position: position, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listUserMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let page = try await service.messages(
            app: app, conversation: id, viewer: user, paging: try Paging(request, collection: .messages),
            urls: service.urls(request), logger: context.logger)
        return try Response.list(page)
    }

    // MARK: Acting as the user

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        let status = try await request.receiptStatus()
        try await service.addReceipt(app: app, user: user, message: id, status: status, logger: context.logger)
        return Response(status: .noContent)
    }

    /// `mode=my_devices` hides the message from the user; `mode=all_participants` deletes it for
    /// everybody, which only its sender may do.
    @Sendable func deleteUserMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        let mode = try request.deletionMode()
        try await service.repositories.messages.deleteMessage(
            app: app, caller: .user(user), id: id, mode: mode, logger: context.logger)
        return Response(status: .noContent)
    }

    // MARK: Identity

    /// Creates the user's identity: 201 with no body, 409 `conflict` (with the identity) when the
    /// user has one already, made by the backend, a session or a conversation they are in.
    @Sendable func createIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let user = try context.parameters.appUserID("user")
        let input = try await request.decodeJSON(IdentityInput.self, allowedKeys: IdentityInput.keys)
        let record = try input.record(user: user)
        guard try await service.repositories.identities.createIdentity(app: app, record, logger: context.logger) else {
            let existing = try? await service.identity(
                app: app, user: user, viewer: nil, urls: service.urls(request), logger: context.logger)
            throw APIError(
                .conflict, "The user '\(user)' has an identity already; replace it with PUT or change it with PATCH.",
                data: try existing.map(jsonValue))
        }
        await directory.changed(app: app, users: [user], logger: context.logger)
        await service.pushIdentityChange(app: app, user: user, .created, logger: context.logger)
        return Response(status: .created)
    }

    @Sendable func getIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let user = try context.parameters.appUserID("user")
        return try Response.json(
            try await service.identity(app: app, user: user, viewer: nil, urls: service.urls(request), logger: context.logger))
    }

    /// Replaces every field of the identity (absent ones become empty); `display_name` is required.
    @Sendable func replaceIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let user = try context.parameters.appUserID("user")
        let input = try await request.decodeJSON(IdentityInput.self, allowedKeys: IdentityInput.keys)
        guard
            let (before, after) = try await service.repositories.identities.replaceIdentity(
                app: app, try input.record(user: user), logger: context.logger)
        else {
            throw APIError.notFound("The user '\(user)'")
        }
        await directory.changed(app: app, users: [user], logger: context.logger)
        await service.pushIdentityChange(app: app, user: user, .updated(before: before, after: after), logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func patchIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let user = try context.parameters.appUserID("user")
        let operations = try await request.decodeLayerPatch()
        let (before, after) = try await service.repositories.identities.patchIdentity(
            app: app, user: user, operations: operations, logger: context.logger)
        await directory.changed(app: app, users: [user], logger: context.logger)
        await service.pushIdentityChange(app: app, user: user, .updated(before: before, after: after), logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func deleteIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let user = try context.parameters.appUserID("user")
        guard try await service.repositories.identities.deleteIdentity(app: app, user: user, logger: context.logger) else {
            throw APIError.notFound("The user '\(user)'")
        }
        service.identities.forget(app: app, user: user)
        await directory.changed(app: app, users: [user], logger: context.logger)
        await service.pushIdentityChange(app: app, user: user, .deleted, logger: context.logger)
        return Response(status: .noContent)
    }

    // MARK: Blocks

    /// The users `owner` blocks: identities, or in 1.x `[{"user_id"}]`.
    @Sendable func listBlocks(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, owner) = try await existingUser(context)
        let blocked = try await service.blockedIdentities(
            app: app, owner: owner, urls: service.urls(request), logger: context.logger)
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
        let (app, owner) = try await existingUser(context)
        let body = try await request.decodeJSON(BlockBody.self, allowedKeys: BlockBody.keys)
        let blocked: String
        switch (body.userID, body.id) {
        case (let user?, nil): blocked = try userID(fromText: user, property: "user_id")
        case (nil, let id?): blocked = try userID(fromText: id, property: "id")
        case (nil, nil): throw APIError(.missingProperty, "Name the user to block by user_id or id.", property: "user_id")
        case (_?, _?): throw APIError.invalid("id", "Name the user to block by user_id or by id, not both.")
        }
        guard blocked != owner else { return Response(status: .noContent) }
        try await service.repositories.blocks.block(app: app, owner: owner, blocked: blocked, logger: context.logger)
        await service.pushBlockChange(app: app, owner: owner, blocked: blocked, request: request, context: context)
        return Response(status: .noContent)
    }

    @Sendable func removeBlock(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, owner) = try await existingUser(context)
        // The blocked user is named by user id or (URL-encoded) identity id.
        let blocked = try userID(fromText: try context.parameters.appUserID("blocked"), property: "user_id")
        try await service.repositories.blocks.unblock(app: app, owner: owner, blocked: blocked, logger: context.logger)
        await service.pushBlockChange(app: app, owner: owner, blocked: blocked, request: request, context: context)
        return Response(status: .noContent)
    }
}
