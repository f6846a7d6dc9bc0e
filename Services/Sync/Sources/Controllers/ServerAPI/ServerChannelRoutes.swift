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
        let scope = try domain.appScope(request, context)
        return try Response.list(try await domain.channels.list(paging: try Paging(request, collection: .channels), scope))
    }

    @Sendable func getChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.json(try await domain.channels.channel(id, scope))
    }

    @Sendable func deleteChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.delete(id, scope)
        return Response(status: .noContent)
    }

    @Sendable func listChannelMembers(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(try await domain.channels.members(of: id, paging: try MemberPaging(request), scope))
    }

    @Sendable func addChannelMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.addMember(try context.parameters.appUserID("user"), to: id, scope)
        return Response(status: .noContent)
    }

    @Sendable func removeChannelMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.removeMember(try context.parameters.appUserID("user"), from: id, scope)
        return Response(status: .noContent)
    }

    @Sendable func listChannelMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await domain.channels.messages(in: id, paging: try Paging(request, collection: .messages), scope))
    }

    @Sendable func getChannelMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let channel = try context.parameters.layerID("channel", as: .channels).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        return try Response.json(try await domain.channels.message(id, in: channel, scope))
    }

    @Sendable func deleteChannelMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let channel = try context.parameters.layerID("channel", as: .channels).uuid
        let id = try context.parameters.layerID("message", as: .messages).uuid
        try await domain.channels.deleteMessage(id, in: channel, scope)
        return Response(status: .noContent)
    }
}
