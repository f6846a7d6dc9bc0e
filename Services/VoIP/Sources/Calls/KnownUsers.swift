import Foundation
import LayerModels
import LayerServer
import Logging
import Synchronization

/// Whether a user belongs to an app, as the auth service knows it. A user once known stays known
/// here for ``lifetime`` (a suspension reaches calls within it); an unknown one is asked again
/// each time, so a user who signs in for the first time can be called at once.
final class KnownUsers: Sendable {
    static let lifetime = Duration.seconds(30)
    let auth: InternalClient
    private let known = Mutex<[String: ContinuousClock.Instant]>([:])

    init(auth: InternalClient) { self.auth = auth }

    func isKnown(_ user: String, app: UUID, logger: Logger) async throws -> Bool {
        let key = "\(app.lowercased)\u{0}\(user)"
        if known.withLock({ $0[key].map { $0 > .now } ?? false }) { return true }
        let answer = try await auth.post(
            InternalAPI.knownUsersPath, body: InternalAPI.UsersRequest(appID: app, userIDs: [user]),
            as: InternalAPI.KnownUsersResponse.self, idempotent: true, logger: logger)
        guard answer.known.contains(user) else { return false }
        known.withLock { entries in
            if entries.count >= 100_000 { entries.removeAll() }
            entries[key] = .now + Self.lifetime
        }
        return true
    }
}
