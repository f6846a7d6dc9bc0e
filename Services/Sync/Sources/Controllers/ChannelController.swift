import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The Client API of channels (session-authenticated): creating and listing them, their
/// metadata, members (joining and leaving) and messages.
struct ChannelController: Sendable {
    let service: Messaging

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("channels", use: createChannel)
        router.get("channels", use: listChannels)
        router.get("channels/:channel", use: getChannel)
        router.patch("channels/:channel", use: patchChannel)
        router.delete("channels/:channel", use: deleteChannel)
        router.get("channels/:channel/messages", use: listMessages)
        router.post("channels/:channel/messages", use: sendMessage)
        router.get("channels/:channel/members", use: listMembers)
        router.get("channels/:channel/members/:user", use: getMember)
        router.put("channels/:channel/members/:user", use: addMember)
        router.delete("channels/:channel/members/:user", use: removeMember)
    }

    @Sendable func createChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let body = try await request.decodeJSON(Messaging.CreateChannelBody.self, allowedKeys: Messaging.CreateChannelBody.keys)
        let channel = try await service.createChannel(
            body, app: app, caller: .user(user), urls: service.urls(request), logger: context.logger)
        return try Response.json(channel, status: .created)
    }

    @Sendable func listChannels(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        return try Response.list(
            try await service.channels(
                app: app, member: user, paging: try Paging(request, collection: .channels), urls: service.urls(request),
                logger: context.logger))
    }

    @Sendable func getChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.json(
            try await service.channel(app: app, id: id, viewer: user, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func patchChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let operations = try await request.decodeLayerPatch()
        try await service.repositories.channels.patchChannel(
            app: app, caller: .user(user), id: id, operations: operations, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func deleteChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await service.repositories.channels.deleteChannel(app: app, caller: .user(user), id: id, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await service.channelMessages(
                app: app, channel: id, caller: .user(user), paging: try Paging(request, collection: .messages),
                urls: service.urls(request), logger: context.logger))
    }

    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let body = try await request.decodeJSON(MessageInput.self, limit: 256 * 1024, allowedKeys: MessageInput.clientKeys)
        let message = try await service.sendChannelMessage(
            body, app: app, channel: id, sender: .user(user), urls: service.urls(request), logger: context.logger)
        return try Response.json(message, status: .created)
    }

    @Sendable func listMembers(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await service.channelMembers(
                app: app, channel: id, caller: .user(user), paging: try MemberPaging(request), urls: service.urls(request),
                logger: context.logger))
    }

    @Sendable func getMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let member = try context.parameters.appUserID("user")
        return try Response.json(
            try await service.channelMember(
                app: app, channel: id, user: member, caller: .user(user), urls: service.urls(request), logger: context.logger))
    }

    @Sendable func addMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let member = try context.parameters.appUserID("user")
        try await service.repositories.channels.addMember(
            app: app, caller: .user(user), channel: id, user: member, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func removeMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let member = try context.parameters.appUserID("user")
        try await service.repositories.channels.removeMember(
            app: app, caller: .user(user), channel: id, user: member, logger: context.logger)
        return Response(status: .noContent)
    }
}
