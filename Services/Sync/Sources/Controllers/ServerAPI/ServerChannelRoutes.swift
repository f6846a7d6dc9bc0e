import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API's channels, in the system view (no membership of a viewer): the app's backend
/// lists and reads every channel of the app, its members and messages, manages who is in it, and
/// deletes channels and messages (moderation). Users create channels.
extension ServerAPIController {
    func addChannelRoutes(to server: some RouterMethods<LayerRequestContext>) {
        server.get("channels", use: listChannels)
        server.get("channels/:channel", use: getChannel)
        server.delete("channels/:channel", use: deleteChannel)
        server.get("channels/:channel/members", use: listChannelMembers)
        server.put("channels/:channel/members/:user", use: addChannelMember)
        server.delete("channels/:channel/members/:user", use: removeChannelMember)
        server.get("channels/:channel/messages", use: listChannelMessages)
        server.get("channels/:channel/messages/:message", use: getChannelMessage)
        server.delete("channels/:channel/messages/:message", use: deleteChannelMessage)
    }

    @Sendable func listChannels(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.list(
            try await service.channels(
                app: try appID(context), member: nil, paging: try Paging(request, collection: .channels),
                urls: service.urls(request), logger: context.logger))
    }

    @Sendable func getChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.json(
            try await service.channel(
                app: try appID(context), id: id, viewer: nil, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func deleteChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await service.repositories.channels.deleteChannel(
            app: try appID(context), caller: .app, id: id, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listChannelMembers(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await service.channelMembers(
                app: try appID(context), channel: id, caller: .app, paging: try MemberPaging(request),
                urls: service.urls(request), logger: context.logger))
    }

    @Sendable func addChannelMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await service.repositories.channels.addMember(
            app: try appID(context), caller: .app, channel: id, user: try context.parameters.appUserID("user"),
            logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func removeChannelMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await service.repositories.channels.removeMember(
            app: try appID(context), caller: .app, channel: id, user: try context.parameters.appUserID("user"),
            logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func listChannelMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await service.channelMessages(
                app: try appID(context), channel: id, caller: .app, paging: try Paging(request, collection: .messages),
                urls: service.urls(request), logger: context.logger))
    }

    @Sendable func getChannelMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        return try Response.json(try await channelMessage(request, context).message.object)
    }

    @Sendable func deleteChannelMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, message) = try await channelMessage(request, context)
        try await service.repositories.channels.deleteMessage(app: app, caller: .app, id: message.id, logger: context.logger)
        return Response(status: .noContent)
    }

    /// The message of the path, which must be a message of the channel of the path (404 otherwise).
    private func channelMessage(
        _ request: Request, _ context: LayerRequestContext
    ) async throws -> (app: UUID, message: (id: UUID, object: ChannelMessageObject)) {
        let app = try appID(context)
        let channel = try context.parameters.layerID("channel", as: .channels)
        let id = try context.parameters.layerID("message", as: .messages).uuid
        guard
            let message = try await service.channelMessage(
                app: app, id: id, caller: .app, urls: service.urls(request), logger: context.logger),
            message.channel.id == channel.uri
        else { throw APIError.notFound("The message") }
        return (app, (id, message))
    }
}
