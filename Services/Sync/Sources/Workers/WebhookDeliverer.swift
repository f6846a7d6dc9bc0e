import AsyncHTTPClient
import Crypto
import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import ServiceLifecycle

/// Delivers the webhooks' outbox: each event as `POST <target_url>` with the body rendered in the
/// webhook's version (the same rendering as the API's), signed with the webhook's secret
/// (`layer-webhook-signature`, the hex HMAC-SHA1 of the body), and the same
/// `layer-webhook-request-id` on every attempt. A 2xx within the webhook's timeout delivers it;
/// anything else is tried again later, ever less often, until the webhook's deliveries have failed
/// for its retry window and it turns inactive. Replicas share the outbox under leases; a webhook's
/// events of one conversation go out in order, one after another (in batches when they gather).
struct WebhookDeliverer: Service {
    let domain: SyncDomain
    let repository: WebhookRepository
    let secrets: SealedSecrets
    let alarm: Alarm
    let http: HTTPClient
    /// Where the resources of a payload point (the suite's public base URL).
    let baseURL: @Sendable () -> String
    let logger: Logger
    let metrics = WebhookMetrics()

    /// How long any one step with the database may take. A query can wait forever on a connection
    /// that closed under it (see ``withDeadline(_:_:)``); past this the deliverer leaves it behind.
    static let databaseLimit: Duration = .seconds(20)
    /// How long events gather behind the first: while events flow, the deliverer takes more every
    /// twice this.
    static let gathering: Duration = .milliseconds(250)
    /// The longest it sleeps unwoken, in case a notice was lost while the listener reconnected.
    static let longestSleep: Duration = .seconds(30)

    /// The most deliveries this replica has in flight at once.
    var maxInFlight = 64

    /// Keeps up to ``maxInFlight`` deliveries going, each on its own, so that a slow receiver holds
    /// up nothing but its own events. While events flow it takes more every half second (or when
    /// a delivery ends while all were busy), so that a conversation's events gather meanwhile and
    /// go out in batches: an event waits about half a second at most. With nothing in flight it
    /// sleeps until the earliest undelivered event is due (at most ``longestSleep``), or until the
    /// alarm rings: an event was recorded on some replica (M0017's notice), or a webhook was
    /// activated here. Told to shut down, it takes no more and lets those in flight finish, so
    /// that a replica that stops leaves no receiver with an event it took but was never told of.
    func run() async throws {
        enum Ended { case delivery, tick }
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Ended.self) { group in
                var inFlight = 0
                var ticking = false
                var taking = true
                var took = false
                var housekeeping = Housekeeping()
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    if taking && inFlight < maxInFlight {
                        do {
                            let due = try await withDeadline(Self.databaseLimit) { [maxInFlight, inFlight] in
                                try await repository.dueDeliveries(limit: maxInFlight - inFlight, logger: logger)
                            }
                            took = !due.isEmpty
                            if !due.isEmpty {
                                let webhooks = try await withDeadline(Self.databaseLimit) {
                                    try await repository.webhooks(ids: Array(Set(due.map(\.webhookID))), logger: logger)
                                }
                                for delivery in due {
                                    guard let webhook = webhooks[delivery.webhookID] else { continue }
                                    inFlight += 1
                                    group.addTask {
                                        // The first event, then what gathered behind it, and
                                        // batch after batch while they come full (a backlog).
                                        // A batch stuck past any deadline of its own is left
                                        // behind; its leases run out, it is taken again.
                                        let limit = webhook.timeout * Self.batchSize + Self.databaseLimit * 3
                                        var batch = [delivery]
                                        var first = true
                                        while !batch.isEmpty {
                                            let (current, more) = (batch, first || batch.count >= Self.batchSize)
                                            first = false
                                            batch =
                                                (try? await withDeadline(limit) {
                                                    await deliver(current, to: webhook, takingMore: more)
                                                }) ?? []
                                        }
                                        return .delivery
                                    }
                                }
                            }
                        } catch {
                            logger.warning("Could not take webhook deliveries", metadata: ["error": "\(error)"])
                        }
                    }
                    if !ticking {
                        ticking = true
                        let sleep = inFlight > 0 || took ? nil : await idleSleep()
                        group.addTask {
                            if let sleep {
                                // Woken by an event: those right behind it gather a moment.
                                if await alarm.wait(upTo: sleep) { try? await Task.sleep(for: Self.gathering) }
                            } else {
                                try? await Task.sleep(for: Self.gathering * 2)
                            }
                            return .tick
                        }
                    }
                    switch await group.next() {
                    case .delivery?:
                        taking = inFlight == maxInFlight
                        inFlight -= 1
                    case .tick?:
                        ticking = false
                        taking = true
                    case nil: break
                    }
                    housekeeping =
                        (try? await withDeadline(Self.databaseLimit) { [housekeeping] in
                            var copy = housekeeping
                            await keepHouse(&copy)
                            return copy
                        }) ?? housekeeping
                }
                await group.waitForAll()
            }
        } onGracefulShutdown: {
            alarm.ring()
        }
    }

    /// How long to sleep unless rung, with nothing in flight: until the earliest undelivered
    /// event is due (at least ``gathering`` × 2: one may wait behind its conversation's failing
    /// one), at most ``longestSleep``.
    private func idleSleep() async -> Duration {
        let next: Date?
        do {
            next = try await withDeadline(Self.databaseLimit) { try await repository.nextAttempt(logger: logger) }
        } catch {
            return Self.gathering * 2
        }
        guard let next else { return Self.longestSleep }
        let wait = Duration.milliseconds(Int64(max(next.timeIntervalSinceNow, 0) * 1000))
        return min(max(wait, Self.gathering * 2), Self.longestSleep)
    }

    /// Every few seconds the backlog's gauges; every minute, events older than their webhooks keep
    /// them go (every replica prunes; each takes rows the others have not).
    private func keepHouse(_ housekeeping: inout Housekeeping) async {
        let now = ContinuousClock.now
        guard housekeeping.due(now) else { return }
        do {
            let (events, oldest) = try await repository.backlog(logger: logger)
            metrics.pending.record(events)
            metrics.lag.record(Double(WebhookRepository.milliseconds(oldest)) / 1000)
            guard housekeeping.pruneDue(now, keep: try await repository.shortestKeep(logger: logger)) else { return }
            while true {
                let (removed, undelivered) = try await repository.prune(limit: 5000, logger: logger)
                if undelivered > 0 {
                    metrics.dropped.increment(by: undelivered)
                    logger.warning("Dropped webhook events kept past their time", metadata: ["events": "\(undelivered)"])
                }
                if removed < 5000 { break }
            }
        } catch {
            logger.warning("Could not keep the webhook outbox", metadata: ["error": "\(error)"])
        }
    }

    /// When the housekeeping last ran.
    struct Housekeeping {
        var measured: ContinuousClock.Instant?
        var pruned: ContinuousClock.Instant?
        var every: Duration = .seconds(5)
        var pruneEvery: Duration = .seconds(60)

        mutating func due(_ now: ContinuousClock.Instant) -> Bool {
            if let measured, now - measured < every { return false }
            measured = now
            return true
        }

        /// Once a minute, or twice as often as the shortest time a webhook keeps its events.
        mutating func pruneDue(_ now: ContinuousClock.Instant, keep: Duration?) -> Bool {
            let every = min(pruneEvery, (keep ?? pruneEvery) / 2)
            if let pruned, now - pruned < every { return false }
            pruned = now
            return true
        }
    }

    /// The most events of one conversation taken at once, after the first.
    static let batchSize = 32

    /// Delivers a batch of one conversation's events in order, rendered together; then, with
    /// `takingMore` and unless this replica is shutting down, takes the conversation's next batch
    /// (those due that no other replica has), which it returns. The first failure ends the batch:
    /// the events after it wait.
    func deliver(_ batch: [WebhookDelivery], to webhook: WebhookRecord, takingMore: Bool) async -> [WebhookDelivery] {
        var done: [WebhookRepository.Attempt] = []
        var failure: (attempt: WebhookRepository.Attempt, reason: String)?
        let bodies = await payloads(batch, webhook)
        for (delivery, body) in zip(batch, bodies) {
            let started = ContinuousClock.now
            var status: Int?
            var reason: String?
            do {
                status = try await post(try body.get(), of: delivery, to: webhook)
                if let status, !(200..<300).contains(status) { reason = "The receiver answered \(status)" }
            } catch let refusal as WebhookRefusal {
                reason = refusal.reason
            } catch {
                reason = "The delivery failed: \(error)"
            }
            let attempt = WebhookRepository.Attempt(delivery: delivery, status: status, latency: ContinuousClock.now - started)
            metrics.latency.recordNanoseconds(Int64(WebhookRepository.milliseconds(attempt.latency)) * 1_000_000)
            (reason == nil ? metrics.delivered : metrics.failed).increment()
            if let reason {
                failure = (attempt, reason)
                break
            }
            done.append(attempt)
        }
        do {
            guard let failure else {
                return try await repository.delivered(
                    done, next: takingMore && !Task.isShuttingDownGracefully ? Self.batchSize : 0, logger: logger)
            }
            if !done.isEmpty { _ = try await repository.delivered(done, next: 0, logger: logger) }
            let delivery = failure.attempt.delivery
            logger.info(
                "Webhook delivery failed",
                metadata: ["webhook": "\(webhook.id)", "attempt": "\(delivery.attempts + 1)", "error": "\(failure.reason)"])
            try await repository.failed(
                delivery, status: failure.attempt.status, error: failure.reason, latency: failure.attempt.latency,
                retryAt: Date().addingTimeInterval(Self.backoff(attempt: delivery.attempts + 1)), window: webhook.retryWindow,
                releasing: batch.map(\.id).filter { $0 > delivery.id }, logger: logger)
        } catch {
            // Taken again once their leases run out: at least once.
            logger.warning("Could not record webhook deliveries", metadata: ["error": "\(error)"])
        }
        return []
    }

    /// Posts one event's body to the webhook's target, signed; the receiver's status.
    private func post(_ body: Data, of delivery: WebhookDelivery, to webhook: WebhookRecord) async throws -> Int {
        if let refusal = await WebhookTargets.refusal(calling: webhook.targetURL, privateTargets: webhook.privateTargets) {
            throw WebhookRefusal(reason: refusal)
        }
        var request = HTTPClientRequest(url: webhook.targetURL)
        request.method = .POST
        let secret = try secrets.open(webhook.sealedSecret)
        let signature = HMAC<Insecure.SHA1>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        let app = webhook.appID.lowercased
        request.headers.add(name: "Content-Type", value: "application/vnd.layer.webhooks+json; version=\(webhook.version)")
        request.headers.add(name: "User-Agent", value: "layer-webhooks/\(webhook.version)")
        request.headers.add(
            name: "layer-webhook-event-type", value: WebhookEvents.name(of: delivery.kind, version: webhook.version))
        request.headers.add(name: "layer-webhook-signature", value: signature.map { String(format: "%02x", $0) }.joined())
        request.headers.add(name: "layer-webhook-request-id", value: delivery.requestID.lowercased)
        request.headers.add(name: "layer-webhook-id", value: "layer:///apps/\(app)/webhooks/\(webhook.id.lowercased)")
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await http.execute(request, timeout: .init(webhook.timeout))
        _ = try await response.body.collect(upTo: 64 * 1024)
        return Int(response.status.code)
    }

    /// Seconds before attempt `attempt` (the first retry is attempt 2): doubling from one second up
    /// to five minutes, each within a fifth either way so that many failing events do not come back
    /// together.
    static func backoff(attempt: Int) -> TimeInterval {
        let base = min(300, pow(2, Double(max(0, attempt - 2))))
        return base * Double.random(in: 0.8...1.2)
    }
}

/// The suite will not call a webhook's target (``WebhookTargets/refusal(calling:)``).
struct WebhookRefusal: Error {
    let reason: String
}
