import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import Synchronization

/// Makes sure the users of the sessions that use the service have an identity. The auth service
/// reports each sign-in's claims when the session opens (`POST /internal/v1/identities/claims`),
/// so an identity is normally there already, with any later edits of the app's backend; this
/// covers a report still on its way (the sync service was down), and an identity the app deleted
/// while the session lived, which the session's next use makes anew from the claims. It never
/// overwrites: re-applying a session's old claims would undo what the app's backend changed
/// since. A user is written once per process (until their identity is deleted here), so a busy
/// user costs no writes.
final class IdentityRecorder: Sendable {
    let repositories: SyncRepositories
    private let written = Mutex<[String: InternalAPI.Identity]>([:])

    init(repositories: SyncRepositories) {
        self.repositories = repositories
    }

    func record(_ session: AuthenticatedSession, logger: Logger) async throws {
        let claims = session.identity ?? InternalAPI.Identity(userID: session.userID)
        let key = "\(session.appID.lowercased) \(session.userID)"
        if written.withLock({ $0[key] }) == claims { return }
        try await repositories.identities.ensureIdentity(claims, app: session.appID, logger: logger)
        written.withLock { entries in
            if entries.count > 100_000 { entries.removeAll() }
            entries[key] = claims
        }
    }

    /// The user's identity was deleted: their sessions' next use gives them a new one.
    func forget(app: UUID, user: String) {
        _ = written.withLock { $0.removeValue(forKey: "\(app.lowercased) \(user)") }
    }
}
