import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Following on behalf of one user (`/apps/:app/users/:user/following…`, the 2.0 Server API):
/// the same as the user's own Client API routes. The user must exist; whom they follow need not.
extension ServerAPIController {
    @Sendable func listFollowing(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        return try Response.list(
            try await service.followedIDs(app: app, user: user, paging: try IdentityPaging(request), logger: context.logger))
    }

    /// The identities of whom the user follows, as the user sees them.
    @Sendable func listFollowedIdentities(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        return try Response.list(
            try await service.followedIdentities(
                app: app, user: user, paging: try IdentityPaging(request), urls: service.urls(request), logger: context.logger))
    }

    @Sendable func followMany(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let users = try await request.followedUsers()
        try await service.follow(app: app, user: user, users: users, property: "body", logger: context.logger)
        return Response(status: .accepted)
    }

    @Sendable func getFollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let followed = try context.parameters.followedUser("followed")
        guard try await service.isFollowing(app: app, user: user, followed: followed, logger: context.logger) else {
            throw APIError.notFound("A follow of '\(followed)'")
        }
        return Response(status: .noContent)
    }

    @Sendable func follow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let followed = try context.parameters.followedUser("followed")
        try await service.follow(app: app, user: user, users: [followed], property: "followed", logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func unfollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let followed = try context.parameters.followedUser("followed")
        try await service.unfollow(app: app, user: user, followed: followed, property: "followed", logger: context.logger)
        return Response(status: .noContent)
    }
}
