import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Logging
import NIOCore
import Synchronization
import Testing

/// PostgreSQL restarted or stopped under the services, on a cluster of these tests' own (the
/// shared test database must stay up for the other suites).
@Suite("PostgreSQL restarts and outages", .serialized)
struct DatabaseFaultTests {
    /// A private cluster for `body`, removed afterwards.
    static func withCluster<T: Sendable>(_ body: (EmbeddedPostgres) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layerline-faults-\(UUID().uuidString)")
        let cluster = try EmbeddedPostgres.start(directory: directory, logger: Logger(label: "fault-postgres"))
        // Also when the test process dies before the end of the test.
        try cluster.stopAndRemoveAfterExit(of: getpid())
        defer { cluster.stopAndRemove() }
        return try await body(cluster)
    }

    /// Short deadlines, so that an outage shows in seconds.
    static func settings(_ cluster: EmbeddedPostgres) -> ServerSettings {
        var settings = ServerSettings(database: cluster.settings)
        settings.requestTimeout = .seconds(4)
        settings.readinessTimeout = .milliseconds(800)
        settings.database?.statementTimeout = settings.requestTimeout
        return settings
    }

    @Test(
        "Messages acknowledged while PostgreSQL restarts (fast and immediate) under concurrent senders are all stored, once; every request is answered 201 or 503"
    )
    func restartsUnderLoad() async throws {
        try await Self.withCluster { cluster in
            try await SyncHarness.run(server: Self.settings(cluster)) { harness in
                let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
                let start = try #require(try await bob.sync()["anchor"])
                let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                    for mode in [EmbeddedPostgres.ShutdownMode.fast, .immediate, .fast, .immediate] {
                        try await Task.sleep(for: .milliseconds(1500))
                        try cluster.restart(mode: mode)
                    }
                    try await Task.sleep(for: .milliseconds(1500))
                }

                let unanswered = outcomes.filter { $0.status == nil }
                #expect(unanswered.isEmpty, "requests without an answer: \(unanswered.compactMap(\.failure).prefix(3))")
                let unexpected = outcomes.compactMap(\.status).filter { $0 != 201 && $0 != 503 }
                #expect(unexpected.isEmpty, "statuses other than 201 and 503: \(unexpected)")
                let refused = outcomes.filter { $0.status == 503 }
                #expect(refused.allSatisfy { $0.retryAfter != nil }, "every 503 says when to retry")
                let acknowledged = outcomes.compactMap(\.messageID)
                #expect(acknowledged.count > 50, "the senders got through between restarts (\(acknowledged.count) stored)")
                print("Restarts under load: \(acknowledged.count) messages acknowledged, \(refused.count) requests answered 503")

                try await Self.waitUntilReady(harness)
                // Every acknowledged message is stored and in Bob's changelog exactly once.
                let (missing, twice) = try await FaultLoad.findAcknowledged(acknowledged, by: bob, after: start)
                #expect(missing.isEmpty, "acknowledged but not stored: \(missing.prefix(5))")
                #expect(twice.isEmpty, "in the changelog twice: \(twice.prefix(5))")
            }
        }
    }

    @Test(
        "While PostgreSQL is down, readiness and requests answer 503 within their deadlines; once it is back the service is ready again"
    )
    func outage() async throws {
        try await Self.withCluster { cluster in
            try await SyncHarness.run(server: Self.settings(cluster)) { harness in
                let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
                _ = try await alice.send("before", to: conversation)
                try cluster.stopServer(mode: .fast)

                let ready = try await harness.client.send(Self.readinessRequest(harness), timeout: .seconds(5))
                #expect(ready.status == 503, "readiness during the outage: \(ready.status)")
                #expect(ready.json?["checks"]?["database"]?.stringValue == "unavailable", "\(ready.text)")
                // A deadline of 4 s: the client's own 15 s would only catch a request that hangs.
                for attempt in 0..<3 {
                    let outcome = await FaultLoad.send("during \(attempt)", as: alice, to: conversation)
                    #expect(outcome.status == 503, "a send during the outage: \(outcome)")
                    #expect(outcome.retryAfter != nil)
                }

                try cluster.startAgain()
                try await Self.waitUntilReady(harness)
                _ = try await alice.send("after", to: conversation)
            }
        }
    }

    @Test("Every message acknowledged while PostgreSQL restarts under concurrent senders reaches the app's webhook")
    func webhookEventsSurviveRestarts() async throws {
        let webhook = FaultWebhook()
        try await WebPageServer.run(webhook.receiver.routes) { port in
            try await Self.withCluster { cluster in
                var sync = SyncSettings()
                sync.webhookPrivateTargets = true
                try await SyncHarness.run(settings: sync, server: Self.settings(cluster)) { harness in
                    let api = try await harness.server()
                    try await webhook.register(port: port, app: api.appID, token: api.token, client: api.client)
                    let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
                    let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                        for mode in [EmbeddedPostgres.ShutdownMode.fast, .immediate, .fast, .immediate] {
                            try await Task.sleep(for: .milliseconds(1500))
                            try cluster.restart(mode: mode)
                        }
                        try await Task.sleep(for: .milliseconds(1500))
                    }
                    let acknowledged = outcomes.compactMap(\.messageID)
                    #expect(acknowledged.count > 50)
                    let (missing, repeated) = try await webhook.awaitDeliveries(of: acknowledged)
                    print("PostgreSQL restarts with a webhook: \(acknowledged.count) acknowledged, \(repeated) delivered again")
                    #expect(
                        missing.count == 0,
                        "acknowledged but never delivered: \(missing.count) of \(acknowledged.count), such as \(missing.prefix(3))"
                    )
                }
            }
        }
    }

    static func readinessRequest(_ harness: SyncHarness) -> HTTPClientRequest {
        HTTPClientRequest(url: harness.client.baseURL + "/health/ready")
    }

    /// Polls readiness until it answers 200; fails past 10 seconds.
    static func waitUntilReady(_ harness: SyncHarness) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let ready = try? await harness.client.send(readinessRequest(harness), timeout: .seconds(5))
            if ready?.status == 200 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record(
                    "not ready 10 s after PostgreSQL came back: \(ready.map { "\($0.status) \($0.text)" } ?? "no answer")")
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
