import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import Synchronization

/// Keeps identities up to date with the claims of the sessions that use the service. The claims
/// come with every introspection answer; they are written when they differ from what this
/// process last wrote, so a busy user costs no writes.
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
        try await repositories.identities.recordClaims(claims, app: session.appID, user: session.userID, logger: logger)
        written.withLock { entries in
            if entries.count > 100_000 { entries.removeAll() }
            entries[key] = claims
        }
    }
}
