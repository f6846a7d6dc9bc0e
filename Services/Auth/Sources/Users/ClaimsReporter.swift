import Foundation
import LayerModels
import LayerServer
import Logging
import ServiceLifecycle

/// Tells the sync service, which owns identities, the claims of each sign-in: at once when the
/// session opens, so that the user exists for the sync service before the client holds its
/// session, and again later (``ClaimsReporterService``) for every sign-in that could not be
/// reported then. A session opens whether or not the sync service answers; the claims wait in
/// `auth.unreported_claims` until it does.
struct ClaimsReporter: Sendable {
    let claims: ClaimsRepository
    /// Calls that give up on a refused connection at once: a report that fails is made later.
    let sync: InternalClient
    let cache: IdentityCache
    let retry: Duration
    static let longestRetry: Duration = .seconds(60)

    /// Reports one sign-in's claims (with those of earlier sign-ins still unreported); never fails.
    func report(_ entry: UnreportedClaims, logger: Logger) async {
        await report([entry], app: entry.app, logger: logger)
    }

    /// Reports what is due; how many users' claims it tried.
    func flush(logger: Logger) async throws -> Int {
        let due = try await claims.due(limit: 200, lease: .seconds(30), logger: logger)
        for (app, entries) in Dictionary(grouping: due, by: \.app) {
            await report(entries, app: app, logger: logger)
        }
        return due.count
    }

    private func report(_ entries: [UnreportedClaims], app: UUID, logger: Logger) async {
        do {
            _ = try await sync.post(
                InternalAPI.identityClaimsPath, body: InternalAPI.ClaimsReport(appID: app, claims: entries.map(\.claims)),
                as: InternalAPI.Acknowledgement.self, idempotent: true, logger: logger)
        } catch {
            logger.warning(
                "Could not report sign-ins to the sync service; trying again later",
                metadata: ["users": "\(entries.count)", "error": "\(error)"])
            do {
                try await claims.failed(entries, first: retry, longest: Self.longestRetry, logger: logger)
            } catch {
                logger.warning("Could not put off a report of sign-ins", metadata: ["error": "\(error)"])
            }
            return
        }
        await cache.changed(app: app, users: entries.map(\.claims.userID), logger: logger)
        do {
            try await claims.reported(entries, logger: logger)
        } catch {
            // Reported again later, which changes nothing.
            logger.warning("Could not mark sign-ins as reported", metadata: ["error": "\(error)"])
        }
    }
}

/// Reports the sign-ins that could not be reported at once, every ``ClaimsReporter/retry``.
struct ClaimsReporterService: Service {
    let reporter: ClaimsReporter

    func run() async throws {
        let logger = Logger(label: "auth.claims-reporter")
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: reporter.retry)
                do {
                    // A full batch is followed by the next at once.
                    while try await reporter.flush(logger: logger) == 200, !Task.isCancelled {}
                } catch {
                    logger.warning("Reporting sign-ins failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
