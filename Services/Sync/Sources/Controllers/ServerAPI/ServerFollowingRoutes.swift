import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Following on behalf of one user (`/apps/:app/users/:user/following…`, the 2.0 Server API):
/// the Client API's handlers (``FollowingController``) in the scope of the user of the path, who
/// must exist; whom they follow need not.
extension ServerAPIController {
    @Sendable func listFollowing(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.listFollowing(request, domain.following, try await domain.actingUserScope(request, context))
    }

    /// The identities of whom the user follows, as the user sees them.
    @Sendable func listFollowedIdentities(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.listIdentities(
            request, domain.following, try await domain.actingUserScope(request, context))
    }

    @Sendable func followMany(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.followMany(request, domain.following, try await domain.actingUserScope(request, context))
    }

    @Sendable func getFollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.getFollow(context, domain.following, try await domain.actingUserScope(request, context))
    }

    @Sendable func follow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.follow(context, domain.following, try await domain.actingUserScope(request, context))
    }

    @Sendable func unfollow(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try await FollowingController.unfollow(context, domain.following, try await domain.actingUserScope(request, context))
    }
}
