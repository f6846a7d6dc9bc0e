import Crypto
import Foundation
import Hummingbird
import LayerModels
import Logging
import Synchronization

/// Decides whether a Server API token belongs to an app. The auth service answers from its own
/// tables; the other services ask it over internal HTTP (``HTTPAppTokenVerifier``).
public protocol AppTokenVerifier: Sendable {
    func isValidToken(_ token: String, app: UUID, logger: Logger) async throws -> Bool
}

/// Server API requests carry `Authorization: Bearer <token>` with a live token of the app in the
/// path (`/apps/:app/…`); a token of another app is refused like a wrong one.
public struct AppTokenMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext
    let verifier: any AppTokenVerifier

    public init(verifier: any AppTokenVerifier) {
        self.verifier = verifier
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let app = try context.parameters.layerID("app", as: .apps)
        guard let token = request.bearerToken,
            try await verifier.isValidToken(token, app: app.uuid, logger: context.logger)
        else {
            throw APIError(
                .authenticationRequired, "This route needs Authorization: Bearer with a Server API token of this app.",
                headers: [.wwwAuthenticate: "Bearer realm=\"server-api\""])
        }
        context.crossOrigin.madeFor(app: app.uuid)
        return try await next(request, context)
    }
}

/// Asks the auth service, keeping positive answers for `ttl` (a revoked token stops working
/// within it); negative answers are never kept.
public final class HTTPAppTokenVerifier: AppTokenVerifier {
    let client: InternalClient
    let ttl: Duration
    private let valid = Mutex<[SHA256Digest: ContinuousClock.Instant]>([:])

    public init(client: InternalClient, ttl: Duration) {
        self.client = client
        self.ttl = ttl
    }

    public func isValidToken(_ token: String, app: UUID, logger: Logger) async throws -> Bool {
        let key = SHA256.hash(data: Data((app.lowercased + " " + token).utf8))
        let now = ContinuousClock.now
        if let until = valid.withLock({ $0[key] }), until > now { return true }
        let answer = try await client.post(
            InternalAPI.appTokensPath, body: InternalAPI.AppTokenRequest(appID: app, token: token),
            as: InternalAPI.AppTokenResponse.self, idempotent: true, logger: logger)
        valid.withLock { entries in
            if entries.count > 10_000 { entries = entries.filter { $0.value > now } }
            entries[key] = answer.valid ? now + ttl : nil
        }
        return answer.valid
    }
}
