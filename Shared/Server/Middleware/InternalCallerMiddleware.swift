import HTTPTypes
import Hummingbird
import LayerModels

/// Guards internal routes: `Authorization: Bearer <token>` with the token of one of the services
/// that may call them (``InternalTokens``), compared in constant time. The token of another
/// service of the suite is 403 `access_denied`, anything else 401.
public struct InternalCallerMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext
    let callers: [String]
    let tokens: InternalTokens

    /// Routes that `callers` (service names, ``InternalAPI/Service``) may call.
    public init(accepting callers: [String], tokens: InternalTokens) {
        self.callers = callers
        self.tokens = tokens
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let presented = request.bearerToken, tokens.service(presenting: presented, among: callers) != nil else {
            if let presented = request.bearerToken,
                let other = tokens.service(presenting: presented, among: InternalAPI.Service.all)
            {
                throw APIError(.accessDenied, "The \(other) service may not call this route.")
            }
            throw APIError(
                .authenticationRequired,
                "This route needs Authorization: Bearer with the internal token of "
                    + callers.joined(separator: ", ") + ".",
                headers: [.wwwAuthenticate: "Bearer realm=\"internal\""])
        }
        return try await next(request, context)
    }
}
