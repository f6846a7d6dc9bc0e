import Foundation
import LayerModels
import LayerServer
import Logging

/// Ends sessions — a logout, a revocation, a challenge, a suspension, a revoked device
/// certificate — and tells the services that may still hold them open. Those services trust an
/// introspection for a few seconds and keep push connections open for hours; told at once, the
/// sync service forgets what it cached and closes the connections on every replica. The notice
/// goes out after the change is committed and never holds up or fails the caller: when the other
/// service cannot be reached, the introspection cache time still bounds how long it trusts the
/// session.
struct SessionEndings: Sendable {
    let sessions: SessionRepository
    let certificates: CertificateRepository
    /// The services to tell (`/internal/v1/sessions/ended`): sync, where it runs.
    let peers: [InternalClient]

    /// Logs one session out; false when there is no such session.
    func logout(token: String, logger: Logger) async throws -> Bool {
        guard let owner = try await sessions.deleteSession(token: token, logger: logger) else { return false }
        announce(
            .init(appID: owner.app, userID: owner.user, reason: "revoked", sessions: [Self.reference(token: token)]),
            logger: logger)
        return true
    }

    /// Revokes every session of a user.
    func revoke(app: UUID, userID: String, logger: Logger) async throws {
        try await sessions.deleteSessions(app: app, userID: userID, logger: logger)
        announce(.init(appID: app, userID: userID, reason: "revoked"), logger: logger)
    }

    /// Challenges every session of a user.
    func challenge(app: UUID, userID: String, logger: Logger) async throws {
        _ = try await sessions.challengeSessions(app: app, userID: userID, logger: logger)
        announce(.init(appID: app, userID: userID, reason: "challenged"), logger: logger)
    }

    /// Suspends a user (their sessions answer 403 until reinstated) or reinstates them (their old
    /// sessions are cleared).
    func setSuspended(app: UUID, userID: String, suspended: Bool, logger: Logger) async throws {
        guard try await sessions.setSuspended(app: app, userID: userID, suspended: suspended, logger: logger) else { return }
        announce(.init(appID: app, userID: userID, reason: suspended ? "suspended" : "revoked"), logger: logger)
    }

    /// Revokes a device certificate, which ends the sessions bound to it; false when there is no
    /// such certificate, or it was revoked before.
    func revokeCertificate(_ id: UUID, logger: Logger) async throws -> Bool {
        guard let bound = try await certificates.revoke(id, logger: logger) else { return false }
        for (owner, sessions) in Dictionary(grouping: bound, by: { Owner(app: $0.app, user: $0.user) }) {
            let references = sessions.map { $0.tokenHash.base64URLEncodedString() }
            announce(
                .init(appID: owner.app, userID: owner.user, reason: "certificate_revoked", sessions: references),
                logger: logger)
        }
        return true
    }

    /// How a notice names one session: the base64url SHA-256 of its token, never the token.
    static func reference(token: String) -> String {
        Data(Secrets.hash(token)).base64URLEncodedString()
    }

    private struct Owner: Hashable {
        var app: UUID
        var user: String
    }

    private func announce(_ notice: InternalAPI.SessionsEnded, logger: Logger) {
        for peer in peers {
            Task {
                do {
                    _ = try await peer.post(
                        InternalAPI.sessionsEndedPath, body: notice, as: InternalAPI.Acknowledgement.self, idempotent: true,
                        logger: logger)
                } catch {
                    logger.warning(
                        "Could not tell another service that sessions ended; its cache time bounds them",
                        metadata: ["user_id": "\(notice.userID)", "error": "\(error)"])
                }
            }
        }
    }
}
