import Foundation
import LayerModels
import LayerServer
import Logging

/// Blocks hold for calls as for conversations, both ways: nobody rings a user who blocked them,
/// nor calls someone they blocked themselves. Blocks are the sync service's; it is asked at each
/// call. When it cannot answer, the call is refused (503): ringing someone who may have blocked
/// the caller is worse than a call that has to be placed again.
struct CallBlocks: Sendable {
    let sync: InternalClient

    /// Fails with 422 `participant_blocked` (naming `callee`) when either blocked the other.
    func requireNone(between caller: String, and callee: String, app: UUID, logger: Logger) async throws {
        let found = try await sync.post(
            InternalAPI.blocksBetweenPath,
            body: InternalAPI.BlocksBetweenRequest(appID: app, userID: caller, userIDs: [callee]),
            as: InternalAPI.BlocksBetween.self, idempotent: true, logger: logger)
        if found.blocked.contains(callee) {
            throw APIError(.participantBlocked, "You blocked '\(callee)', so you cannot call them.", property: "callee")
        }
        if found.blockedBy.contains(callee) {
            throw APIError(.participantBlocked, "'\(callee)' cannot be called by you.", property: "callee")
        }
    }
}
