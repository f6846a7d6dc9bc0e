import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// `POST /internal/v1/sessions/ended`: the auth service ended sessions of a user (a logout, a
/// revocation, a challenge, a suspension, a revoked certificate). The notice goes through the push
/// channel to every replica, each of which drops what it cached about the user's sessions and
/// closes the connections open with those that ended.
struct SessionsEndedController {
    let push: Push
    let internalToken: String

    func addRoutes(to router: Router<LayerRequestContext>) {
        router.group("internal/v1")
            .add(middleware: StaticBearerMiddleware(token: internalToken, realm: "internal"))
            .post("sessions/ended", use: ended)
    }

    @Sendable func ended(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let notice = try await request.decodeJSON(
            InternalAPI.SessionsEnded.self, limit: 512 * 1024, allowedKeys: ["app_id", "user_id", "reason", "sessions"])
        guard !notice.userID.isEmpty, notice.userID.utf8.count <= 1024, !notice.userID.contains("\u{0}") else {
            throw APIError.invalid("user_id", "user_id names a user.")
        }
        if let sessions = notice.sessions {
            guard sessions.count <= 10_000, sessions.allSatisfy({ $0.count == 43 }) else {
                throw APIError.invalid("sessions", "sessions are at most 10000 base64url SHA-256 hashes of session tokens.")
            }
        }
        try await PushChannel.publish(notice, postgres: push.postgres, logger: context.logger)
        return try Response.json(InternalAPI.Acknowledgement(), status: .accepted)
    }
}
