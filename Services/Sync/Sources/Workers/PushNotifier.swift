import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import Logging
import ServiceLifecycle

/// Sends the push jobs to APNs and FCM, off the path of the sends that recorded them. Replicas
/// share the jobs under leases; woken by the notice each transaction that records jobs sends (see
/// ``PushJobAlarm``), a job leaves within milliseconds of its commit. A job becomes one push per
/// device that holds a token and is not connected at that moment; a push that fails for a
/// passing reason (429, 5xx, no answer) becomes a job of its own, tried again with backoff.
struct PushNotifier: Service {
    let repository: PushRepository
    let senders: ProviderSenders
    let settings: PushProviderSettings
    let alarm: PushJobAlarm
    let logger: Logger
    let metrics = PushMetrics()

    /// Jobs taken at once.
    static let batchSize = 64
    /// Batches in flight at once; the pushes of a batch go out together.
    static let maxBatches = 4
    /// How long jobs gather after a wake-up before they are taken: a few milliseconds of delay for
    /// far fewer claims under load.
    static let gathering: Duration = .milliseconds(10)
    /// How many times one push is sent before it is given up.
    static let maxTries = 8
    /// How long a database step may take (see ``withDeadline(_:_:)``).
    static let databaseLimit: Duration = .seconds(20)
    /// The longest it sleeps unwoken: a job whose notice was lost while the listener reconnected
    /// is taken by then.
    static let longestSleep: Duration = .seconds(30)

    /// How long jobs stay leased to this replica: longer than any batch takes.
    var lease: Duration { settings.timeout * 2 + .seconds(10) }

    func run() async throws {
        let http = try HTTPClient.push(caFile: settings.caFile)
        enum Ended { case batch, tick }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Ended.self) { group in
                var inFlight = 0
                var ticking = false
                var taking = true
                var housekeeping = ContinuousClock.now - .seconds(3600)
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    if taking && inFlight < Self.maxBatches {
                        let claimed =
                            (try? await withDeadline(Self.databaseLimit) { [repository, lease, logger] in
                                try await repository.claim(limit: Self.batchSize, lease: lease, logger: logger)
                            }) ?? ClaimedPushes()
                        if !claimed.jobs.isEmpty {
                            inFlight += 1
                            group.addTask {
                                _ = try? await withDeadline(lease) { await send(claimed, http: http) }
                                // The sleep was measured before this batch's retries were due.
                                alarm.alarm.ring()
                                return .batch
                            }
                            continue
                        }
                        taking = false
                    }
                    if !ticking {
                        ticking = true
                        let wait = await idleWait(&housekeeping)
                        group.addTask {
                            await alarm.alarm.wait(upTo: wait)
                            return .tick
                        }
                    }
                    switch await group.next() {
                    case .batch?: inFlight -= 1
                    case .tick?:
                        ticking = false
                        // Woken by a change: the jobs of the changes right behind it gather a
                        // moment, to go out in one batch rather than one claim each.
                        try? await Task.sleep(for: Self.gathering)
                    case nil: break
                    }
                    taking = true
                }
                await group.waitForAll()
            }
        } onGracefulShutdown: {
            alarm.alarm.ring()
        }
    }

    /// How long to sleep unless woken: until the next job falls due (a retry), at most
    /// ``longestSleep``. On the way, once a minute, the failing providers' gauge and the failure
    /// log's pruning.
    private func idleWait(_ housekeeping: inout ContinuousClock.Instant) async -> Duration {
        let now = ContinuousClock.now
        let periodic = now - housekeeping >= .seconds(60)
        if periodic { housekeeping = now }
        let next: Date?
        do {
            next = try await withDeadline(Self.databaseLimit) { [repository, logger, metrics] in
                if periodic {
                    metrics.failingProviders.record(try await repository.failingProviders(logger: logger))
                    try await repository.pruneFailures(logger: logger)
                }
                return try await repository.nextDue(logger: logger)
            }
        } catch {
            return .seconds(1)
        }
        guard let due = next else { return Self.longestSleep }
        let seconds = min(max(due.timeIntervalSinceNow, 0.005), Self.longestSleep / .seconds(1))
        return .milliseconds(Int(seconds * 1000))
    }

    /// One push to make: where it goes and what it says, and how many times it was sent before.
    private struct Attempt: Sendable {
        var app: UUID
        var user: String
        var device: String
        var kind: String
        var subject: UUID?
        var push: RenderedPush
        var tries: Int
        var since: Date
    }

    /// Sends what a batch of jobs comes to and records the outcome; the jobs are done.
    func send(_ claimed: ClaimedPushes, http: HTTPClient) async {
        do {
            let jobs = claimed.jobs
            let retries = jobs.filter { $0.kind == .retry }
            let apps = Set(claimed.targets.map(\.app)).union(retries.map(\.app))
            let generation = alarm.generation
            let providers = try await senders.records(for: apps, generation: generation) { [repository, logger] missing in
                try await repository.providers(apps: missing, logger: logger)
            }
            let byID = Dictionary(jobs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

            var attempts: [Attempt] = []
            for (target, badge) in zip(claimed.targets, claimed.badges) {
                guard let job = byID[target.job],
                    let record = providers["\(target.app.uuidString)/\(target.provider.rawValue)"]
                else { continue }  // no provider for this kind of token: nothing to send it with
                var topic = ""
                if case .apns(_, let defaultTopic)? = senders.sender(for: record) { topic = target.bundleID ?? defaultTopic }
                let content = PushContent(
                    notification: target.notification, recipient: target.user, badge: badge, layer: target.layer,
                    collapseID: target.collapseID, threadID: target.threadID)
                attempts.append(
                    Attempt(
                        app: target.app, user: target.user, device: target.device, kind: job.kind.rawValue, subject: job.subject,
                        push: content.render(target.provider, token: target.token, topic: topic), tries: 0,
                        since: job.createdAt))
            }
            for job in retries {
                guard let retry = job.retry else { continue }
                attempts.append(
                    Attempt(
                        app: job.app, user: retry.user, device: retry.device, kind: retry.kind, subject: retry.subject,
                        push: retry.push, tries: retry.tries, since: job.createdAt))
            }
            try await settle(jobs, attempts: attempts, providers: providers, http: http)
        } catch {
            logger.warning("Could not send push notifications", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private func settle(
        _ jobs: [PushJob], attempts: [Attempt], providers: [String: PushRepository.ProviderRecord], http: HTTPClient
    ) async throws {
        let outcomes = await withTaskGroup(of: (Int, PushOutcome?).self) { group in
            for (index, attempt) in attempts.enumerated() {
                group.addTask {
                    guard let record = providers["\(attempt.app.uuidString)/\(attempt.push.provider.rawValue)"],
                        !record.failing, let sender = senders.sender(for: record)
                    else { return (index, nil) }
                    if attempt.tries == 0 { metrics.delay.record(duration: .seconds(-attempt.since.timeIntervalSinceNow)) }
                    return (index, await sender.send(attempt.push, http: http, timeout: settings.timeout))
                }
            }
            var outcomes = [PushOutcome?](repeating: nil, count: attempts.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }

        var retries: [(app: UUID, retry: PushRetry, at: Date)] = []
        var gone: [(app: UUID, provider: PushProvider, token: String)] = []
        var failures: [PushFailure] = []
        var refused: [String: (PushRepository.ProviderRecord, String)] = [:]
        for (attempt, outcome) in zip(attempts, outcomes) {
            let provider = attempt.push.provider
            func failure(_ status: Int?, _ reason: String, _ result: String) {
                failures.append(
                    PushFailure(
                        app: attempt.app, provider: provider, user: attempt.user, device: attempt.device, kind: attempt.kind,
                        subject: attempt.subject, status: status, reason: reason, outcome: result))
                metrics.count(provider, result)
            }
            switch outcome {
            case nil:
                metrics.count(provider, "provider_failing")
            case .sent?:
                metrics.count(provider, "sent")
            case .tokenGone(let status, let reason)?:
                gone.append((attempt.app, provider, attempt.push.token))
                failure(status, reason, "token_removed")
            case .retry(let status, let reason, let after)?:
                let tries = attempt.tries + 1
                guard tries < Self.maxTries else {
                    failure(status, reason, "dropped")
                    continue
                }
                let wait = after ?? Self.backoff(tries: tries)
                retries.append(
                    (
                        attempt.app,
                        PushRetry(
                            push: attempt.push, user: attempt.user, device: attempt.device, kind: attempt.kind,
                            subject: attempt.subject, tries: tries),
                        Date().addingTimeInterval(Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
                    ))
                failure(status, reason, "retried")
            case .credentialsRefused(let status, let reason)?:
                if let record = providers["\(attempt.app.uuidString)/\(provider.rawValue)"] {
                    refused["\(attempt.app.uuidString)/\(provider.rawValue)"] = (record, reason)
                }
                failure(status, reason, "credentials_refused")
            case .rejected(let status, let reason)?:
                failure(status, reason, "rejected")
            }
        }
        for (record, reason) in refused.values {
            logger.error(
                "A push provider refused the app's credentials; marked failing",
                metadata: ["app": "\(record.app)", "provider": "\(record.provider.rawValue)", "reason": "\(reason)"])
            try await withDeadline(Self.databaseLimit) { [repository, logger] in
                try await repository.markFailing(
                    app: record.app, provider: record.provider, updatedAt: record.updatedAt, reason: reason, logger: logger)
                // Every replica reads the providers again, and stops sending with these.
                try await PushChannel.publishProvidersChanged(app: record.app, postgres: repository.postgres, logger: logger)
            }
            alarm.providersChanged()
        }
        try await withDeadline(Self.databaseLimit) { [repository, logger, retries, gone, failures] in
            try await repository.settle(
                done: jobs.map(\.id), retries: retries, gone: gone, failures: failures, logger: logger)
        }
    }

    /// 1 s after the first failure, doubling to 5 minutes, ±20 %.
    static func backoff(tries: Int) -> Duration {
        let seconds = min(300.0, pow(2, Double(max(0, tries - 1))))
        return .milliseconds(Int(seconds * Double.random(in: 0.8...1.2) * 1000))
    }
}
