import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The Client API of channels (session-authenticated): creating and listing them, their
/// metadata, members (joining and leaving) and messages.
struct ChannelController: Sendable {
    let domain: SyncDomain

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
        let scope = try await domain.userScope(request, context)
        let body = try await request.decodeJSON(Channels.NewChannelInput.self, allowedKeys: Channels.NewChannelInput.keys)
        return try Response.json(try await domain.channels.create(body, scope), status: .created)
    }

    @Sendable func listChannels(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        return try Response.list(try await domain.channels.list(paging: try Paging(request, collection: .channels), scope))
    }

    @Sendable func getChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.json(try await domain.channels.channel(id, scope))
    }

    @Sendable func patchChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.patch(id, operations: try await request.decodeLayerPatch(), scope)
        return Response(status: .noContent)
    }

    @Sendable func deleteChannel(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.delete(id, scope)
        return Response(status: .noContent)
    }

    @Sendable func listMessages(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(
            try await domain.channels.messages(in: id, paging: try Paging(request, collection: .messages), scope))
    }

    @Sendable func sendMessage(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let body = try await request.decodeJSON(MessageInput.self, limit: 256 * 1024, allowedKeys: MessageInput.clientKeys)
        return try Response.json(try await domain.channels.send(body, to: id, as: .user(scope.user), scope), status: .created)
    }

    @Sendable func listMembers(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        return try Response.list(try await domain.channels.members(of: id, paging: try MemberPaging(request), scope))
    }

    @Sendable func getMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        let member = try context.parameters.appUserID("user")
        return try Response.json(try await domain.channels.member(member, of: id, scope))
    }

    @Sendable func addMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.addMember(try context.parameters.appUserID("user"), to: id, scope)
        return Response(status: .noContent)
    }

    @Sendable func removeMember(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("channel", as: .channels).uuid
        try await domain.channels.removeMember(try context.parameters.appUserID("user"), from: id, scope)
        return Response(status: .noContent)
    }
}
