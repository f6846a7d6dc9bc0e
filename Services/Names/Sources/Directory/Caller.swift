import Foundation
import LayerServer

/// Who asks: a signed-in user of the app, or the app's own backend with a Server API token.
enum Caller: Sendable {
    case user(String, app: UUID)
    case server(app: UUID)

    var app: UUID {
        switch self {
        case .user(_, let app), .server(let app): app
        }
    }

    var user: String? {
        if case .user(let user, _) = self { return user }
        return nil
    }

    /// The most records one request may hold: 1,000 for a user, 10,000 for the app's backend.
    var recordLimit: Int { user == nil ? 10_000 : 1_000 }

    /// The largest body of a request of records.
    var bodyLimit: Int { user == nil ? 32 * 1024 * 1024 : 4 * 1024 * 1024 }
}
