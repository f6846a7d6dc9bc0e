import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Following in the Client API (reference 4.6): the identities and ids of whom the caller
/// follows, and explicit follows and unfollows. `following/users/:followed` takes a user id or an
/// identity id (URL-encoded). The Server API's routes of a user (`ServerFollowingRoutes`) are the
/// same handlers in the scope of the user of the path.
struct FollowingController: Sendable {
    let domain: SyncDomain

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("identities", use: listIdentities)
        router.get("following", use: listFollowing)
        router.post("following/users", use: followMany)
        router.get("following/users/:followed", use: getFollow)
        router.put("following/users/:followed", use: follow)
        router.delete("following/users/:followed", use: unfollow)
    }

    @Sendable func listIdentities(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.listIdentities(request, domain.following, try await domain.userScope(request, context))
    }

    @Sendable func listFollowing(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.listFollowing(request, domain.following, try await domain.userScope(request, context))
    }

    @Sendable func followMany(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.followMany(request, domain.following, try await domain.userScope(request, context))
    }

    @Sendable func getFollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.getFollow(context, domain.following, try await domain.userScope(request, context))
    }

    @Sendable func follow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.follow(context, domain.following, try await domain.userScope(request, context))
    }

    @Sendable func unfollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await Self.unfollow(context, domain.following, try await domain.userScope(request, context))
    }

    // MARK: The same for a session and for the Server API acting as a user

    static func listIdentities(_ request: Request, _ following: Following, _ scope: Scope) async throws -> Response {
        try Response.list(try await following.followedIdentities(paging: try IdentityPaging(request), scope))
    }

    static func listFollowing(_ request: Request, _ following: Following, _ scope: Scope) async throws -> Response {
        try Response.list(try await following.followedIDs(paging: try IdentityPaging(request), scope))
    }

    /// 202, as the original answered a bulk follow; the follows are made when it answers.
    static func followMany(_ request: Request, _ following: Following, _ scope: Scope) async throws -> Response {
        try await following.follow(try await request.followedUsers(), property: "body", scope)
        return Response(status: .accepted)
    }

    /// 204 when the user follows the user of the path, 404 `not_found` otherwise (and for themselves).
    static func getFollow(_ context: LayerRequestContext, _ following: Following, _ scope: Scope) async throws -> Response {
        let followed = try context.parameters.followedUser("followed")
        guard try await following.follows(followed, scope) else { throw APIError.notFound("A follow of '\(followed)'") }
        return Response(status: .noContent)
    }

    static func follow(_ context: LayerRequestContext, _ following: Following, _ scope: Scope) async throws -> Response {
        try await following.follow([try context.parameters.followedUser("followed")], property: "followed", scope)
        return Response(status: .noContent)
    }

    static func unfollow(_ context: LayerRequestContext, _ following: Following, _ scope: Scope) async throws -> Response {
        try await following.unfollow(try context.parameters.followedUser("followed"), property: "followed", scope)
        return Response(status: .noContent)
    }
}
