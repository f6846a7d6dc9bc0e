import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// A `layer-sync` process of its own, killed with SIGKILL under load and started again, as an
/// orchestrator restarts a crashed container; the auth service it asks runs in the test.
@Suite("layer-sync killed under load", .serialized)
struct ProcessFaultTests {
    @Test(
        "Messages acknowledged by a layer-sync killed three times under 8 senders are all stored, once; no request hangs, and it is ready again within 5 s of each start"
    )
    func killedUnderLoad() async throws {
        let database = try await TestDatabase.settings()
        let internalTokens = InternalTokens.random()
        let port = Int.random(in: 20_000..<60_000)
        let syncURL = "http://127.0.0.1:\(port)"
        try await AuthFixture.run(
            settings: ServerSettings(database: database, internalTokens: internalTokens), syncURL: syncURL
        ) { auth in
            let sync = ServiceProcess(
                "layer-sync", port: port,
                environment: [
                    "LAYER_DATABASE_URL": database.url, "LAYER_AUTH_URL": auth.server.baseURL,
                    "LAYER_CONTENT_LINK_SECRET": Secrets.randomToken(),
                ].merging(internalTokens.environment) { $1 })
            try await sync.start()
            let client = TestClient(baseURL: syncURL)
            let alice = UserClient(id: "alice", token: try await auth.session(user: "alice"), client: client)
            let bob = UserClient(id: "bob", token: try await auth.session(user: "bob"), client: client)
            let conversation = try await alice.conversation(with: ["bob"])
            let start = try #require(try await bob.sync()["anchor"])

            let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                for _ in 0..<3 {
                    try await Task.sleep(for: .milliseconds(1500))
                    try await sync.kill()
                    try await Task.sleep(for: .milliseconds(300))
                    try await sync.start()
                }
                try await Task.sleep(for: .milliseconds(1500))
            }

            let acknowledged = FaultLoad.acknowledged(outcomes)
            let restarts = await sync.readyAfter.dropFirst()
            #expect(restarts.count == 3 && restarts.allSatisfy { $0 < .seconds(5) }, "ready again after: \(restarts)")
            print(
                "kill -9 of layer-sync under load: \(acknowledged.count) acknowledged, "
                    + "\(outcomes.filter { $0.status == nil }.count) cut or refused, "
                    + "ready again after \(restarts.map { "\(Int($0 / .milliseconds(1))) ms" })"
            )

            let (missing, twice) = try await FaultLoad.findAcknowledged(acknowledged, by: bob, after: start)
            #expect(missing.isEmpty, "acknowledged but not stored: \(missing.prefix(5))")
            #expect(twice.isEmpty, "in the changelog twice: \(twice.prefix(5))")
            #expect(try await sync.stop() == 0, "layer-sync stops on SIGTERM")
        }
    }

    @Test(
        "Every message acknowledged by a layer-sync killed three times under 8 senders reaches the app's webhook (at least once)"
    )
    func webhookEventsSurviveKills() async throws {
        let database = try await TestDatabase.settings()
        let internalTokens = InternalTokens.random()
        let port = Int.random(in: 20_000..<60_000)
        let syncURL = "http://127.0.0.1:\(port)"
        let webhook = FaultWebhook()
        try await WebPageServer.run(webhook.receiver.routes) { receiverPort in
            try await AuthFixture.run(
                settings: ServerSettings(database: database, internalTokens: internalTokens), syncURL: syncURL
            ) { auth in
                let sync = ServiceProcess(
                    "layer-sync", port: port,
                    environment: [
                        "LAYER_DATABASE_URL": database.url, "LAYER_AUTH_URL": auth.server.baseURL,
                        "LAYER_CONTENT_LINK_SECRET": Secrets.randomToken(), "LAYER_WEBHOOK_PRIVATE_TARGETS": "true",
                    ].merging(internalTokens.environment) { $1 })
                try await sync.start()
                let client = TestClient(baseURL: syncURL)
                try await webhook.register(
                    port: receiverPort, app: auth.app.id.lowercased, token: try await auth.serverAPIToken(), client: client)
                let alice = UserClient(id: "alice", token: try await auth.session(user: "alice"), client: client)
                _ = try await auth.session(user: "bob")
                let conversation = try await alice.conversation(with: ["bob"])

                let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                    for _ in 0..<3 {
                        try await Task.sleep(for: .milliseconds(1500))
                        try await sync.kill()
                        try await Task.sleep(for: .milliseconds(300))
                        try await sync.start()
                    }
                    try await Task.sleep(for: .milliseconds(1500))
                }
                let acknowledged = FaultLoad.acknowledged(outcomes)
                let (missing, repeated) = try await webhook.awaitDeliveries(of: acknowledged)
                print("kill -9 of layer-sync with a webhook: \(acknowledged.count) acknowledged, \(repeated) delivered again")
                #expect(
                    missing.count == 0,
                    "acknowledged but never delivered: \(missing.count) of \(acknowledged.count), such as \(missing.prefix(3))")
                #expect(try await sync.stop() == 0)
            }
        }
    }

    @Test(
        "Every message acknowledged by a layer-sync killed three times under 8 senders is pushed to the offline recipient's phone (at least once)"
    )
    func pushesSurviveKills() async throws {
        // A database of its own: push jobs are taken by every replica on a database.
        let database = try await TestDatabase.isolated()
        let internalTokens = InternalTokens.random()
        let port = Int.random(in: 20_000..<60_000)
        let syncURL = "http://127.0.0.1:\(port)"
        try await FakePushServices.run { services in
            try await AuthFixture.run(
                settings: ServerSettings(database: database, internalTokens: internalTokens), syncURL: syncURL
            ) { auth in
                let sync = ServiceProcess(
                    "layer-sync", port: port,
                    environment: [
                        "LAYER_DATABASE_URL": database.url, "LAYER_AUTH_URL": auth.server.baseURL,
                        "LAYER_CONTENT_LINK_SECRET": Secrets.randomToken(), "LAYER_APNS_URL": services.baseURL,
                        "LAYER_PUSH_CA_FILE": services.caFile, "LAYER_PUSH_TIMEOUT_MS": "2000",
                    ].merging(internalTokens.environment) { $1 })
                try await sync.start()
                let operatorAuth = [("Authorization", "Bearer \(auth.operatorToken)")]
                let set = try await auth.client.request(
                    .PUT, "/admin/apps/\(auth.app.id.lowercased)/push/apns", headers: operatorAuth,
                    json: FakePushServices.apnsCredentials())
                #expect(set.status == 200, "\(set.text)")
                let client = TestClient(baseURL: syncURL)
                let alice = UserClient(id: "alice", token: try await auth.session(user: "alice"), client: client)
                let bob = UserClient(id: "bob", token: try await auth.session(user: "bob"), client: client)
                let token = PushNotificationHarness.apnsToken()
                #expect(
                    try await bob.post("/push_tokens", ["token": .string(token), "type": "apns", "device_id": "phone"]).status
                        == 202)
                let conversation = try await alice.conversation(with: ["bob"])

                let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                    for _ in 0..<3 {
                        try await Task.sleep(for: .milliseconds(1500))
                        try await sync.kill()
                        try await Task.sleep(for: .milliseconds(300))
                        try await sync.start()
                    }
                    try await Task.sleep(for: .milliseconds(1500))
                }
                let acknowledged = FaultLoad.acknowledged(outcomes)
                let deadline = ContinuousClock.now + .seconds(60)
                var missing = acknowledged
                var pushed: [String] = []
                while !missing.isEmpty && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    pushed = services.pushes(to: token).compactMap { $0.json?["layer"]?["message_identifier"]?.stringValue }
                    let seen = Set(pushed)
                    missing = acknowledged.filter { !seen.contains($0) }
                }
                print(
                    "kill -9 of layer-sync with push: \(acknowledged.count) acknowledged, \(pushed.count - Set(pushed).count) pushed again"
                )
                #expect(
                    missing.isEmpty,
                    "acknowledged but never pushed: \(missing.count) of \(acknowledged.count), such as \(missing.prefix(3))")
                #expect(try await sync.stop() == 0)
            }
        }
    }
}
