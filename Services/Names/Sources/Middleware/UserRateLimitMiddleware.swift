import Foundation
import Hummingbird
import LayerServer

/// Answers 429 `rate_limit_exceeded` when the signed-in user has spent their budget of the rule
/// (a budget per user of each app, whatever address they come from: resolution one address at a
/// time must stay slow enough that nobody enumerates phone numbers through it). The app's own
/// backend, which has no session, is not limited here.
struct UserRateLimitMiddleware: RouterMiddleware {
    typealias Context = LayerRequestContext
    let limiter: RateLimiter
    let what: String

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let session = context.session, !limiter.allow("\(session.appID.uuidString)/\(session.userID)") {
            throw APIError.rateLimited("Too many \(what) by this user; try again shortly.")
        }
        return try await next(request, context)
    }
}
