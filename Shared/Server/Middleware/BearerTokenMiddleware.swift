import Foundation
import HTTPTypes
import Hummingbird
import LayerModels

/// Guards routes with one configured secret: `Authorization: Bearer <token>`, compared in
/// constant time: the operator API. (Internal routes accept the tokens of their callers:
/// ``InternalCallerMiddleware``.)
public struct StaticBearerMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext
    let token: String
    let realm: String

    public init(token: String, realm: String) {
        self.token = token
        self.realm = realm
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard !token.isEmpty, let presented = request.bearerToken, Secrets.constantTimeEquals(presented, token) else {
            throw APIError(
                .authenticationRequired, "This route needs Authorization: Bearer with the \(realm) token.",
                headers: [.wwwAuthenticate: "Bearer realm=\"\(realm)\""])
        }
        return try await next(request, context)
    }
}

extension Request {
    /// The token of an `Authorization: Bearer …` header.
    public var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
