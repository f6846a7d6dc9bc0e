import Logging
import ServiceLifecycle

/// Deletes expired nonces and sessions once a minute.
struct ExpiredRowsCleaner: Service {
    let sessions: Sessions

    func run() async throws {
        let logger = Logger(label: "auth.cleaner")
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(60))
                do {
                    try await sessions.nonces.deleteExpired(logger: logger)
                    try await sessions.sessions.deleteExpired(logger: logger)
                } catch {
                    logger.warning("Cleaning expired rows failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
