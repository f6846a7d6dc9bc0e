import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
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
        var settings = ServerSettings(database: cluster.settings, internalToken: Secrets.randomToken())
        settings.requestTimeout = .seconds(4)
        settings.readinessTimeout = .milliseconds(800)
        settings.database?.statementTimeout = settings.requestTimeout
        return settings
    }

    /// What one request came to: its status, or the error of a request that got no answer.
    struct Outcome: Sendable {
        var status: Int?
        var failure: String?
        var retryAfter: String?
        var messageID: String?
    }

    @Test(
        "Messages acknowledged while PostgreSQL restarts (fast and immediate) under concurrent senders are all stored, once; every request is answered 201 or 503"
    )
    func restartsUnderLoad() async throws {
        try await Self.withCluster { cluster in
            try await SyncHarness.run(server: Self.settings(cluster)) { harness in
                let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
                let start = try #require(try await bob.sync()["anchor"])
                let stop = StopFlag()
                let outcomes = try await withThrowingTaskGroup(of: [Outcome].self) { group in
                    for sender in 0..<8 {
                        group.addTask {
                            var outcomes: [Outcome] = []
                            var index = 0
                            while !stop.isSet {
                                index += 1
                                outcomes.append(await Self.send("s\(sender)-\(index)", as: alice, to: conversation))
                            }
                            return outcomes
                        }
                    }
                    group.addTask {
                        for mode in [EmbeddedPostgres.ShutdownMode.fast, .immediate, .fast, .immediate] {
                            try await Task.sleep(for: .milliseconds(1500))
                            try cluster.restart(mode: mode)
                        }
                        try await Task.sleep(for: .milliseconds(1500))
                        stop.set()
                        return []
                    }
                    return try await group.reduce(into: [Outcome]()) { $0 += $1 }
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
                let logged = try await bob.catchUp(from: start).operations
                    .filter { $0["type"]?.stringValue == "new_message" }.compactMap { $0["message_id"]?.stringValue }
                let counts = Dictionary(logged.map { ($0, 1) }, uniquingKeysWith: +)
                let missing = acknowledged.filter { counts[$0] == nil }
                #expect(missing.isEmpty, "acknowledged but not in the changelog: \(missing.prefix(5))")
                #expect(counts.values.allSatisfy { $0 == 1 }, "a message in the changelog twice")
                for id in acknowledged.prefix(20) {
                    #expect(try await bob.get("/\(path(id))").status == 200, "\(id) can be read")
                }
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
                    let outcome = await Self.send("during \(attempt)", as: alice, to: conversation)
                    #expect(outcome.status == 503, "a send during the outage: \(outcome)")
                    #expect(outcome.retryAfter != nil)
                }

                try cluster.startAgain()
                try await Self.waitUntilReady(harness)
                _ = try await alice.send("after", to: conversation)
            }
        }
    }

    static func send(_ text: String, as user: UserClient, to conversation: String) async -> Outcome {
        var request = HTTPClientRequest(url: user.client.baseURL + "/\(path(conversation))/messages")
        request.method = .POST
        request.headers.add(name: "Accept", value: MediaType.layerJSON)
        request.headers.add(name: "Content-Type", value: MediaType.json)
        for (name, value) in user.auth { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: #"{"parts":[{"mime_type":"text/plain","body":"\#(text)"}]}"#))
        do {
            let response = try await user.client.send(request, timeout: .seconds(15))
            return Outcome(
                status: response.status, retryAfter: response.headers.first(name: "Retry-After"),
                messageID: response.status == 201 ? response.json?["id"]?.stringValue : nil)
        } catch {
            return Outcome(failure: "\(error)")
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

/// Tells the senders of a test to stop.
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
