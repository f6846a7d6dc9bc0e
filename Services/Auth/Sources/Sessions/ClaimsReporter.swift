import Foundation
import LayerModels
import LayerServer
import Logging
import ServiceLifecycle
import Synchronization

/// Tells the sync service, which owns identities, the claims of each sign-in: at once when the
/// session opens, so that the user exists for the sync service before the client holds its
/// session, and again later (``ClaimsReporterService``) for every sign-in that could not be
/// reported then. A session opens whether or not the sync service answers; the claims wait in
/// `auth.unreported_claims` until it does. For ``retry`` after a report failed, sign-ins leave
/// theirs to the reporter, so that while the sync service is down sign-ins seldom wait for it.
struct ClaimsReporter: Sendable {
    let claims: ClaimsRepository
    /// Calls that give up on a refused connection at once: a report that fails is made later.
    let sync: InternalClient
    /// The first retry comes after this long, each later one after twice as long as the one
    /// before, up to ``longestRetry``.
    let retry: Duration
    private let quietUntil = QuietUntil()
    /// Wakes ``ClaimsReporterService``: a report failed (its claims are due in ``retry``), or a
    /// sign-in left its claims to it.
    let wakeUp = Alarm()

    init(claims: ClaimsRepository, sync: InternalClient, retry: Duration) {
        self.claims = claims
        self.sync = sync
        self.retry = retry
    }

    /// How long the reporter leaves a new sign-in's claims alone: the lease of the sign-in's own
    /// report (so the two do not both send them), or nothing while sign-ins leave their claims to
    /// the reporter.
    var hold: Duration { quietUntil.isQuiet ? .zero : .seconds(30) }

    /// A minute, or thirty times ``retry`` if that is less.
    var longestRetry: Duration { min(.seconds(60), retry * 30) }

    /// Reports one sign-in's claims (with those of earlier sign-ins still unreported) if the
    /// sign-in held them for ``hold``; never fails. Claims not held are due now: the reporter's
    /// next round takes them.
    func report(_ entry: UnreportedClaims, held: Duration, logger: Logger) async {
        guard held > .zero else {
            wakeUp.ring()
            return
        }
        _ = await report([entry], app: entry.app, logger: logger)
    }

    /// Reports what is due; how many users' claims it reported, and whether any report failed.
    func flush(logger: Logger) async throws -> (count: Int, failed: Bool) {
        let due = try await claims.due(limit: 200, lease: .seconds(30), logger: logger)
        var failed = false
        for (app, entries) in Dictionary(grouping: due, by: \.app) {
            if await !report(entries, app: app, logger: logger) { failed = true }
        }
        return (due.count, failed)
    }

    private func report(_ entries: [UnreportedClaims], app: UUID, logger: Logger) async -> Bool {
        do {
            _ = try await sync.post(
                InternalAPI.identityClaimsPath, body: InternalAPI.ClaimsReport(appID: app, claims: entries.map(\.claims)),
                as: InternalAPI.Acknowledgement.self, idempotent: true, logger: logger)
        } catch {
            quietUntil.set(ContinuousClock.now + retry)
            defer { wakeUp.ring() }
            logger.warning(
                "Could not report sign-ins to the sync service; trying again later",
                metadata: ["users": "\(entries.count)", "error": "\(error)"])
            do {
                try await claims.failed(entries, first: retry, longest: longestRetry, logger: logger)
            } catch {
                logger.warning("Could not put off a report of sign-ins", metadata: ["error": "\(error)"])
            }
            return false
        }
        quietUntil.set(nil)
        do {
            try await claims.reported(entries, logger: logger)
        } catch {
            // Reported again later, which changes nothing.
            logger.warning("Could not mark sign-ins as reported", metadata: ["error": "\(error)"])
        }
        return true
    }

    /// Until when sign-ins do not try to report themselves.
    private final class QuietUntil: Sendable {
        private let until = Mutex<ContinuousClock.Instant?>(nil)
        var isQuiet: Bool { until.withLock { $0.map { $0 > .now } ?? false } }
        func set(_ instant: ContinuousClock.Instant?) { until.withLock { $0 = instant } }
    }
}

/// Reports the sign-ins that could not be reported at once: while any wait, it looks every
/// ``ClaimsReporter/retry``; with none, it sleeps until a report fails on this replica or a
/// sign-in leaves its claims to it (or a minute passes), and then looks no sooner than `retry`
/// after its last look.
struct ClaimsReporterService: Service {
    let reporter: ClaimsReporter

    func run() async throws {
        let logger = Logger(label: "auth.claims-reporter")
        await cancelWhenGracefulShutdown {
            var sleep = reporter.retry
            var flushed = ContinuousClock.now
            while !Task.isCancelled {
                await reporter.wakeUp.wait(upTo: sleep)
                // Rung early: still never more often than every `retry`.
                let since = ContinuousClock.now - flushed
                if since < reporter.retry { try? await Task.sleep(for: reporter.retry - since) }
                // Shutting down: taking claims now would only hold them under a lease.
                if Task.isCancelled { break }
                flushed = .now
                sleep = reporter.retry
                do {
                    // A full batch that went through is followed by the next at once.
                    while !Task.isCancelled {
                        let (count, failed) = try await reporter.flush(logger: logger)
                        if failed || count < 200 { break }
                    }
                    // Claims wait (the sync service had trouble, or a sign-in's own report is
                    // under way): look every `retry`, as a report's first retry is due then.
                    // None: sleep until a report fails or a sign-in leaves its claims here.
                    let waiting = try await reporter.claims.anyUnreported(logger: logger)
                    sleep = waiting ? reporter.retry : .seconds(60)
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("Reporting sign-ins failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
