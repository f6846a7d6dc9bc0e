import Foundation
import LayerServer

/// An import (`POST …/persons`, `…/persons/deduplicate`, `…/address-books`) reads its body itself,
/// once the route's authentication has let the caller in, so that nobody unknown makes the
/// service hold megabytes; its work then has a minute. At the deadline the work is cancelled (the
/// linker checks for it between its steps, and its transaction rolls back) and the caller gets
/// 503 with `Retry-After`, as every other request past its deadline does.
enum ImportDeadline {
    static let limit = Duration.seconds(60)

    static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            return try await withDeadline(limit, operation)
        } catch is DeadlineExceeded {
            throw APIError(.serviceUnavailable, "The import did not complete in time; try again.", headers: [.retryAfter: "1"])
        }
    }
}
