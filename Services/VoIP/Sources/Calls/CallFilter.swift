import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// What `GET /calls` narrows the call history to: calls with one other user (`with`, an identity
/// id or a user id), placed in a time range (`from` included, `to` not), in one state.
struct CallFilter: Sendable {
    var with: String?
    var from: Date?
    var to: Date?
    var state: CallState?

    init() {}

    /// The filter a request asks for; 422 naming the parameter when one is malformed.
    init(_ request: Request) throws {
        with = try request.queryText("with").map { try IdentityReference.userID($0, property: "with") }
        from = try request.queryTime("from")
        to = try request.queryTime("to")
        if let value = request.queryText("state") {
            guard let state = CallState(rawValue: value) else {
                throw APIError.invalid(
                    "state", "state is one of \(CallState.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            self.state = state
        }
    }
}
