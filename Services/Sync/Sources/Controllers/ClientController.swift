import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The Client API of conversations, messages, receipts and identities (session-authenticated).
struct ClientController: Sendable {
    let service: Messaging

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
    }

    @Sendable func createConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let body = try await request.decodeJSON(
            Messaging.CreateConversationBody.self, allowedKeys: Messaging.CreateConversationBody.keys)
        return try Response.created(
            try await service.createConversation(body, app: app, user: user, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func listConversations(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let page = try await service.conversations(
            app: app, user: user, order: try request.conversationOrder(), paging: try Paging(request, collection: .conversations),
            urls: service.urls(request), logger: context.logger)
        return try Response.list(page)
    }

    @Sendable func getConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try Response.json(
            try await service.conversation(app: app, id: id, viewer: user, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func patchConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let operations = try await request.decodeLayerPatch()
        try await service.repositories.conversations.patchConversation(
            app: app, caller: .user(user), id: id, operations: operations, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func deleteConversation(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let mode = try request.deletionMode()
        let leave = try request.booleanQuery("leave")
        try await service.repositories.conversations.deleteConversation(
            app: app, caller: .user(user), id: id, mode: mode, leave: leave, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func markAllRead(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let position = try await request.markAllReadPosition()
        try await service.markAllRead(app: app, user: user, conversation: id, position: position, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("conversation", as: .conversations).uuid
        let page = try await service.messages(
            app: app, conversation: id, viewer: user, paging: try Paging(request, collection: .messages),
            urls: service.urls(request), logger: context.logger)
        return try Response.list(page)
    }

    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let body = try await request.decodeJSON(MessageInput.self, limit: 256 * 1024, allowedKeys: MessageInput.clientKeys)
        let message = try await service.sendMessage(
            body, app: app, conversation: conversation, sender: .user(user), viewer: user, urls: service.urls(request),
            logger: context.logger)
        return try Response.json(message, status: .created)
    }

    @Sendable func getMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        do {
            return try Response.json(
                try await service.message(app: app, id: id, viewer: user, urls: service.urls(request), logger: context.logger))
        } catch let error as APIError where error.body.id == ErrorID.notFound.rawValue {
            // Not a message of a conversation of theirs: perhaps one of a channel they are in.
            guard
                let message = try await service.channelMessage(
                    app: app, id: id, caller: .user(user), urls: service.urls(request), logger: context.logger)
            else { throw error }
            return try Response.json(message)
        }
    }

    @Sendable func deleteMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        if try await service.repositories.channels.isChannelMessage(app: app, id: id, logger: context.logger) {
            try request.requireChannelDeletionMode()
            try await service.repositories.channels.deleteMessage(app: app, caller: .user(user), id: id, logger: context.logger)
            return Response(status: .noContent)
        }
        try await service.repositories.messages.deleteMessage(
            app: app, caller: .user(user), id: id, mode: try request.deletionMode(), logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        let status = try await request.receiptStatus()
        try await service.addReceipt(app: app, user: user, message: id, status: status, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func getIdentity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (viewer, app) = try await service.caller(context)
        let user = try context.parameters.appUserID("user")
        return try Response.json(
            try await service.identity(app: app, user: user, viewer: viewer, urls: service.urls(request), logger: context.logger))
    }
}
