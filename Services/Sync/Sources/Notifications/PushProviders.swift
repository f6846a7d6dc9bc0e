import AsyncHTTPClient
import Foundation
import LayerServer
import Metrics
import Synchronization

/// Wakes the push-notification sender: a push job was recorded on some replica (M0017's
/// notice), or a provider was set or removed anywhere. Counts the providers' changes, so that
/// credentials read before one are not kept past it.
final class PushJobAlarm: Sendable {
    let alarm = Alarm()
    private let changes = Mutex(0)

    /// A push job was recorded.
    func jobsRecorded() { alarm.ring() }

    /// A provider was set or removed somewhere.
    func providersChanged() {
        changes.withLock { $0 += 1 }
        alarm.ring()
    }

    /// How many times the providers changed so far.
    var generation: Int { changes.withLock { $0 } }
}

/// What `/metrics` tells of push notifications: pushes by provider and outcome, how long after
/// the change that caused it a push left (this replica's), and how many providers of all apps
/// are failing.
struct PushMetrics: Sendable {
    static let results = [
        "sent", "retried", "token_removed", "rejected", "credentials_refused", "dropped", "provider_failing",
    ]
    private let counters: [String: Counter]
    let delay: Metrics.Timer
    let failingProviders: Gauge

    init() {
        _ = Observability.registry  // metrics made before the bootstrap would be lost
        var counters: [String: Counter] = [:]
        for provider in PushProvider.allCases {
            for result in Self.results {
                counters["\(provider.rawValue)/\(result)"] = Counter(
                    label: "layer_push_notifications_total", dimensions: [("provider", provider.rawValue), ("result", result)])
            }
        }
        self.counters = counters
        delay = Metrics.Timer(label: "layer_push_delay_seconds", preferredDisplayUnit: .seconds)
        failingProviders = Gauge(label: "layer_push_providers_failing")
    }

    func count(_ provider: PushProvider, _ result: String) {
        counters["\(provider.rawValue)/\(result)"]?.increment()
    }
}

/// A push service with one app's credentials, ready to send.
enum ProviderSender: Sendable {
    case apns(APNsSender, topic: String)
    case fcm(FCMSender)

    func send(_ push: RenderedPush, http: HTTPClient, timeout: Duration) async -> PushOutcome {
        switch self {
        case .apns(let sender, _): await sender.send(push, http: http, timeout: timeout)
        case .fcm(let sender): await sender.send(push, http: http, timeout: timeout)
        }
    }
}

/// The senders of the apps' providers, made from their credentials once and kept while those
/// stay the same, so that a provider token is reused from push to push.
final class ProviderSenders: Sendable {
    private struct Entry {
        var updatedAt: Date
        var sender: ProviderSender?
    }
    private let entries = Mutex<[String: Entry]>([:])
    /// The apps' provider records as last read (an app without any: an empty list), for the
    /// generation of ``PushJobAlarm`` they were read in and for a few seconds.
    private let records = Mutex<
        (generation: Int, readAt: ContinuousClock.Instant, byApp: [UUID: [PushRepository.ProviderRecord]])
    >(
        (-1, .now, [:]))
    static let recordsLifetime: Duration = .seconds(5)
    private let secrets: SealedSecrets
    private let settings: PushProviderSettings

    init(secrets: SealedSecrets, settings: PushProviderSettings) {
        self.secrets = secrets
        self.settings = settings
    }

    /// The providers of `apps`, keyed `<app uuid>/<provider>`: those read for this generation in
    /// the last few seconds, and the others read with `load`.
    func records(
        for apps: Set<UUID>, generation: Int,
        load: ([UUID]) async throws -> [PushRepository.ProviderRecord]
    ) async throws -> [String: PushRepository.ProviderRecord] {
        var known = records.withLock { cached -> [UUID: [PushRepository.ProviderRecord]] in
            if cached.generation != generation || ContinuousClock.now - cached.readAt > Self.recordsLifetime {
                cached = (generation, .now, [:])
            }
            return cached.byApp
        }
        let missing = apps.filter { known[$0] == nil }
        if !missing.isEmpty {
            var loaded = Dictionary(uniqueKeysWithValues: missing.map { ($0, [PushRepository.ProviderRecord]()) })
            for record in try await load(Array(missing)) { loaded[record.app, default: []].append(record) }
            records.withLock { cached in
                if cached.generation == generation { cached.byApp.merge(loaded) { $1 } }
            }
            known.merge(loaded) { $1 }
        }
        var found: [String: PushRepository.ProviderRecord] = [:]
        for app in apps {
            for record in known[app] ?? [] { found["\(app.uuidString)/\(record.provider.rawValue)"] = record }
        }
        return found
    }

    /// The sender of a provider as stored (nil when its key cannot be opened or read).
    func sender(for record: PushRepository.ProviderRecord) -> ProviderSender? {
        let key = "\(record.app.uuidString)/\(record.provider.rawValue)"
        if let entry = entries.withLock({ $0[key] }), entry.updatedAt == record.updatedAt { return entry.sender }
        let sender = make(record)
        entries.withLock { $0[key] = Entry(updatedAt: record.updatedAt, sender: sender) }
        return sender
    }

    private func make(_ record: PushRepository.ProviderRecord) -> ProviderSender? {
        guard let pem = try? secrets.open(record.sealedKey),
            let credentials = PushCredentials(provider: record.provider, settings: record.settings, privateKey: pem)
        else { return nil }
        switch credentials {
        case .apns(_, _, let topic, _, _):
            return (try? APNsSender(credentials: credentials, settings: settings)).map { .apns($0, topic: topic) }
        case .fcm:
            return (try? FCMSender(credentials: credentials, settings: settings)).map { .fcm($0) }
        }
    }
}
