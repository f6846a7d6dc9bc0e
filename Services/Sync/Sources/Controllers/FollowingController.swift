import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Following in the Client API (reference 4.6): the identities and ids of whom the caller
/// follows, and explicit follows and unfollows. `following/users/:followed` takes a user id or an
/// identity id (URL-encoded).
struct FollowingController: Sendable {
    let service: Messaging

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("identities", use: listIdentities)
        router.get("following", use: listFollowing)
        router.post("following/users", use: followMany)
        router.get("following/users/:followed", use: getFollow)
        router.put("following/users/:followed", use: follow)
        router.delete("following/users/:followed", use: unfollow)
    }

    @Sendable func listIdentities(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        return try Response.list(
            try await service.followedIdentities(
                app: app, user: user, paging: try IdentityPaging(request), urls: service.urls(request), logger: context.logger))
    }

    @Sendable func listFollowing(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        return try Response.list(
            try await service.followedIDs(app: app, user: user, paging: try IdentityPaging(request), logger: context.logger))
    }

    /// 202, as the original answered a bulk follow; the follows are made when it answers.
    @Sendable func followMany(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let users = try await request.followedUsers()
        try await service.follow(app: app, user: user, users: users, property: "body", logger: context.logger)
        return Response(status: .accepted)
    }

    /// 204 when the caller follows the user, 404 `not_found` otherwise (and for the caller).
    @Sendable func getFollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let followed = try context.parameters.followedUser("followed")
        guard try await service.isFollowing(app: app, user: user, followed: followed, logger: context.logger) else {
            throw APIError.notFound("A follow of '\(followed)'")
        }
        return Response(status: .noContent)
    }

    @Sendable func follow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let followed = try context.parameters.followedUser("followed")
        try await service.follow(app: app, user: user, users: [followed], property: "followed", logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func unfollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let followed = try context.parameters.followedUser("followed")
        try await service.unfollow(app: app, user: user, followed: followed, property: "followed", logger: context.logger)
        return Response(status: .noContent)
    }
}
