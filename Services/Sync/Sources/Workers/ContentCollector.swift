import Foundation
import Logging
import ServiceLifecycle

/// Collects rich content nothing refers to any more (see
/// ``ContentRepository/collectGarbage(grace:batch:logger:)``), a batch at a time, every few
/// minutes. Replicas may run it at once: each takes rows the others have not locked.
struct ContentCollector: Service {
    let content: ContentRepository
    let grace: Duration
    var interval: Duration = .seconds(600)
    let logger: Logger

    func run() async throws {
        // Not at once: the server applies its migrations as it starts.
        try? await gracefulShutdown(sleeping: .seconds(60))
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                var removed = 0
                while true {
                    let batch = try await content.collectGarbage(grace: grace, logger: logger)
                    removed += batch
                    if batch < 500 || Task.isShuttingDownGracefully { break }
                }
                if removed > 0 { logger.info("Collected unreferenced content", metadata: ["removed": "\(removed)"]) }
            } catch {
                logger.warning("Could not collect unreferenced content", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await gracefulShutdown(sleeping: interval)
        }
    }
}

/// Sleeps for `duration`, or until a graceful shutdown begins.
private func gracefulShutdown(sleeping duration: Duration) async throws {
    try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
