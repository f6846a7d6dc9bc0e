import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// What an operator (or the app) does to deliveries: pause and resume, replay, and how long
/// events are kept; and what `/metrics` tells of them.
@Suite("Webhooks: pause, resume, replay, keeping")
struct WebhookOperationsTests {
    typealias Receiver = WebhookDeliveryTests.Receiver

    static let accept = "application/vnd.layer.webhooks+json; version=1.0"

    /// A 1.0 webhook for `message.sent` at a receiver, and Alice in a conversation with Bob.
    struct Setup {
        let receiver: Receiver
        let api: ServerClient
        /// `/apps/<app>/webhooks/<uuid>`.
        let path: String
        let alice: UserClient
        let conversation: String

        func post(_ action: String, _ body: JSONValue? = nil) async throws -> TestResponse {
            if let body {
                return try await api.client.request(
                    .POST, "\(path)/\(action)", headers: api.auth, json: body, accept: WebhookOperationsTests.accept)
            }
            return try await api.client.request(
                .POST, "\(path)/\(action)", headers: api.auth, accept: WebhookOperationsTests.accept)
        }
    }

    static func withWebhook(keep: Duration? = nil, _ body: @Sendable (Setup) async throws -> Void) async throws {
        let receiver = Receiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            if let keep { settings.webhookKeep = keep }
            try await SyncHarness.run(settings: settings) { harness in
                let (api, webhookID) = try await WebhookDeliveryTests.register(
                    harness, port: port, version: "1.0", events: ["message.sent"])
                let alice = try await harness.user("alice")
                _ = try await harness.user("bob")
                try await body(
                    Setup(
                        receiver: receiver, api: api,
                        path: "/apps/\(api.appID)/webhooks/\(webhookID.split(separator: "/").last!)",
                        alice: alice, conversation: try await alice.conversation(with: ["bob"])))
            }
        }
    }

    @Test("A paused webhook reads as inactive and gets nothing; resumed, it gets what happened meanwhile, in order")
    func pauseAndResume() async throws {
        try await Self.withWebhook { setup in
            let (receiver, api, path, alice, conversation) = (
                setup.receiver, setup.api, setup.path, setup.alice, setup.conversation
            )
            _ = try await alice.send("before", to: conversation)
            #expect(try await receiver.waitFor(1).count == 1)

            let paused = try await setup.post("pause")
            #expect(paused.status == 200)
            #expect(paused.json?["status"] == "inactive")
            #expect(paused.json?["status_reason"]?.stringValue?.contains("Paused") == true)
            let again = try await setup.post("pause")
            #expect(again.status == 422)
            #expect(again.json?["id"] == "invalid_operation")
            var sent: [JSONValue?] = []
            for text in ["while", "paused"] { sent.append(try await alice.send(text, to: conversation)["id"]) }
            try await Task.sleep(for: .seconds(1))
            #expect(receiver.deliveries.withLock { $0.count } == 1, "nothing goes to a paused webhook")

            let resumed = try await setup.post("resume")
            #expect(resumed.status == 200)
            #expect(resumed.json?["status"] == "active")
            #expect(resumed.json?["status_reason"] == nil || resumed.json?["status_reason"] == .null)
            let got = try await receiver.waitFor(3)
            let messages = try got.dropFirst().map {
                try JSONDecoder().decode(JSONValue.self, from: $0.body)["message"]?["id"]
            }
            #expect(messages == sent)
            let notPaused = try await setup.post("resume")
            #expect(notPaused.status == 422)
            let unknown = try await api.client.request(
                .POST, "/apps/\(api.appID)/webhooks/\(UUID().lowercased)/pause", headers: api.auth, accept: Self.accept)
            #expect(unknown.status == 404)
        }
    }

    @Test("A replay sends kept events again, in order, with their ids; since a time, only the later ones")
    func replay() async throws {
        try await Self.withWebhook { setup in
            let (receiver, api, path, alice, conversation) = (
                setup.receiver, setup.api, setup.path, setup.alice, setup.conversation
            )
            _ = try await alice.send("first", to: conversation)
            let first = try await receiver.waitFor(1)
            try await Task.sleep(for: .milliseconds(50))
            let between = LayerTimestamp.string(Date())
            _ = try await alice.send("second", to: conversation)
            let original = try await receiver.waitFor(2)
            #expect(original.count == 2)

            let all = try await setup.post("replay", [:])
            #expect(all.status == 202)
            #expect(all.json?["events"] == 2)
            let replayed = try await receiver.waitFor(4)
            #expect(replayed.count == 4)
            let ids = replayed.map { $0.headers["layer-webhook-request-id"] }
            #expect(Array(ids[2...]) == Array(ids[..<2]), "the same events, with their ids, in order")
            #expect(first[0].headers["layer-webhook-request-id"] == ids[0])

            let later = try await setup.post("replay", ["since": .string(between)])
            #expect(later.json?["events"] == 1)
            let last = try await receiver.waitFor(5)
            #expect(last.count == 5)
            #expect(last.last?.headers["layer-webhook-request-id"] == ids[1])

            let bad = try await setup.post("replay", ["since": "yesterday"])
            #expect(bad.status == 422)
            #expect(bad.json?["data"]?["property"] == "since")
        }
    }

    @Test("Events are kept as long as the setting says, then dropped; /metrics counts deliveries and the backlog")
    func keepingAndMetrics() async throws {
        try await Self.withWebhook(keep: .seconds(2)) { setup in
            let (receiver, api, path, alice, conversation) = (
                setup.receiver, setup.api, setup.path, setup.alice, setup.conversation
            )
            _ = try await alice.send("kept a while", to: conversation)
            #expect(try await receiver.waitFor(1).count == 1)
            func logged() async throws -> Int {
                try await api.client.request(.GET, "\(path)/deliveries", headers: api.auth, accept: Self.accept)
                    .json?.arrayValue?.count ?? -1
            }
            #expect(try await logged() == 1)
            var remaining = -1
            for _ in 0..<200 {
                remaining = try await logged()
                if remaining == 0 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(remaining == 0, "dropped once older than the webhook keeps its events")

            let metrics = try await api.client.request(.GET, "/metrics", headers: []).text
            #expect(metrics.contains(#"layer_webhook_deliveries_total{result="delivered"}"#))
            #expect(metrics.contains("layer_webhook_lag_seconds"))
            #expect(metrics.contains("layer_webhook_pending_events"))
        }
    }
}
