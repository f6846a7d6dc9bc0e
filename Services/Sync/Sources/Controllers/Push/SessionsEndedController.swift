import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// `POST /internal/v1/sessions/ended`: the auth service ended sessions of a user (a logout, a
/// revocation, a challenge, a suspension, a revoked certificate). The notice goes through the push
/// channel to every replica, each of which drops what it cached about the user's sessions and
/// closes the connections open with those that ended. A device that logged out (or whose session
/// or certificate was revoked) also loses the push token it registered with that session.
struct SessionsEndedController {
    let push: Push

    /// Adds the route to the group of internal routes, which checks the internal token.
    func addRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("sessions/ended", use: ended)
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
        if ["revoked", "certificate_revoked"].contains(notice.reason) {
            try await push.repositories.pushNotifications.sessionsEnded(
                app: notice.appID, user: notice.userID, sessions: notice.sessions, logger: context.logger)
        }
        try await PushChannel.publish(notice, postgres: push.postgres, logger: context.logger)
        return try Response.json(InternalAPI.Acknowledgement(), status: .accepted)
    }
}
