import Crypto
import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import Synchronization
import Testing

/// Deliveries: each event a webhook listens to reaches its receiver, signed, with the same request
/// id on every attempt until the receiver takes it.
@Suite("Webhooks: deliveries")
struct WebhookDeliveryTests {
    typealias Receiver = WebhookReceiver

    static let secret = "s3cret-value"

    /// Registers a webhook of `version` for `events` at the receiver and waits until it is active.
    static func register(
        _ harness: SyncHarness, port: Int, version: String, events: [String]
    ) async throws -> (api: ServerClient, id: String) {
        let api = try await harness.server()
        let accept = "application/vnd.layer.webhooks+json; version=\(version)"
        let made = try await api.client.request(
            .POST, "/apps/\(api.appID)/webhooks", headers: api.auth,
            json: [
                "version": .string(version), "target_url": .string("http://127.0.0.1:\(port)/hook"),
                "events": .array(events.map(JSONValue.string)), "secret": .string(secret), "config": ["team": "blue"],
            ], accept: accept)
        let id = try #require(made.json?["id"]?.stringValue, "\(made.text)")
        let path = "/apps/\(api.appID)/webhooks/\(id.split(separator: "/").last!)"
        for _ in 0..<200 {
            if try await api.client.request(.GET, path, headers: api.auth, accept: accept).json?["status"] == "active" { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (api, id)
    }

    static func signature(_ body: Data) -> String {
        HMAC<Insecure.SHA1>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
            .map { String(format: "%02x", $0) }.joined()
    }

    @Test(
        "A sent message reaches a 1.0 webhook as message.sent and a 2.0 one as Message.created, signed",
        arguments: ["1.0", "2.0"])
    func messageSent(_ version: String) async throws {
        let receiver = Receiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                let event = version == "1.0" ? "message.sent" : "Message.created"
                let (_, webhookID) = try await Self.register(harness, port: port, version: version, events: [event])
                let alice = try await harness.user("alice")
                _ = try await harness.user("bob")
                let conversation = try await alice.conversation(with: ["bob"])
                let message = try await alice.send("hello hooks", to: conversation)

                let delivery = try #require(try await receiver.waitFor(1).first)
                #expect(delivery.headers["layer-webhook-event-type"] == event)
                #expect(delivery.headers["content-type"] == "application/vnd.layer.webhooks+json; version=\(version)")
                #expect(delivery.headers["user-agent"] == "layer-webhooks/\(version)")
                #expect(delivery.headers["layer-webhook-id"] == webhookID)
                #expect(delivery.headers["layer-webhook-signature"] == Self.signature(delivery.body))
                let body = try JSONDecoder().decode(JSONValue.self, from: delivery.body)
                #expect(body["event"]?["type"]?.stringValue == event)
                #expect(body["event"]?["id"]?.stringValue == delivery.headers["layer-webhook-request-id"])
                #expect(body["message"]?["id"] == message["id"])
                #expect(body["config"] == ["team": "blue"])
                if version == "1.0" {
                    #expect(body["event"]?["actor"] == ["user_id": "alice"])
                } else {
                    #expect(body["actor"]?["user_id"] == "alice")
                }
            }
        }
    }

    @Test("A delivery the receiver refuses is tried again with the same request id, and conversations keep their order")
    func retriesKeepTheRequestIDAndTheOrder() async throws {
        let receiver = Receiver()
        receiver.answers.withLock { $0 = [.internalServerError, .badGateway] }
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                let (api, webhookID) = try await Self.register(harness, port: port, version: "1.0", events: ["message.sent"])
                let alice = try await harness.user("alice")
                _ = try await harness.user("bob")
                let conversation = try await alice.conversation(with: ["bob"])
                var sent: [JSONValue?] = []
                for text in ["one", "two", "three"] { sent.append(try await alice.send(text, to: conversation)["id"]) }

                let got = try await receiver.waitFor(5)
                #expect(got.count == 5)
                // The delivery log tells the story, newest first.
                let webhookPath = "/apps/\(api.appID)/webhooks/\(webhookID.split(separator: "/").last!)"
                let log = try await api.client.request(
                    .GET, "\(webhookPath)/deliveries", headers: api.auth,
                    accept: "application/vnd.layer.webhooks+json; version=1.0")
                #expect(log.status == 200)
                let entries = try #require(log.json?.arrayValue)
                #expect(entries.count == 3)
                #expect(entries.last?["attempts"] == 3)
                #expect(entries.last?["last_status"] == 204)
                #expect(entries.last?["delivered_at"]?.stringValue != nil)
                #expect(entries.last?["type"] == "message.sent")
                #expect(entries.last?["event_id"]?.stringValue == got[0].headers["layer-webhook-request-id"])
                let ids = got.map { $0.headers["layer-webhook-request-id"] }
                // The first event was refused twice, then taken: three attempts with one id, before the others.
                #expect(ids[0] == ids[1] && ids[1] == ids[2])
                #expect(Set(ids).count == 3)
                let messages = try got.map { try JSONDecoder().decode(JSONValue.self, from: $0.body)["message"]?["id"] }
                #expect(Array(messages[2...]) == sent, "in the order they were sent")
            }
        }
    }

    @Test("Every change of a conversation reaches a 1.0 webhook as its event, in order, whichever door it came through")
    func conversationEvents() async throws {
        let receiver = Receiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                let events = [
                    "conversation.created", "conversation.updated.metadata", "conversation.updated.participants",
                    "message.sent", "message.read", "message.deleted", "conversation.deleted",
                ]
                let (api, _) = try await Self.register(harness, port: port, version: "1.0", events: events)
                let alice = try await harness.user("alice")
                let bob = try await harness.user("bob")
                _ = try await harness.user("carol")
                let conversation = try await alice.conversation(with: ["bob"])
                let renamed = try await alice.patch(
                    "/\(path(conversation))", [["operation": "set", "property": "metadata.title", "value": "Hooks"]])
                #expect(renamed.status == 204)
                let added = try await alice.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "carol"]])
                #expect(added.status == 204)
                // A message the app's backend sends as a named system sender.
                let uuid = String(conversation.split(separator: "/").last!)
                let sent = try await api.post(
                    "/conversations/\(uuid)/messages",
                    ["sender": ["name": "Order bot"], "parts": [["mime_type": "text/plain", "body": "Shipped"]]])
                #expect(sent.status == 201, "\(sent.text)")
                let message = try #require(sent.json?["id"]?.stringValue)
                #expect(try await bob.post("/\(path(message))/receipts", ["type": "read"]).status == 204)
                #expect(
                    try await api.delete("/conversations/\(uuid)/messages/\(path(message).split(separator: "/").last!)").status
                        == 204)
                #expect(try await alice.delete("/\(path(conversation))?mode=all_participants").status == 204)

                let got = try await receiver.waitFor(events.count)
                let bodies = try got.map { try JSONDecoder().decode(JSONValue.self, from: $0.body) }
                #expect(got.compactMap { $0.headers["layer-webhook-event-type"] } == events)
                #expect(bodies.map { $0["event"]?["type"]?.stringValue } == events)
                #expect(bodies[0]["conversation"]?["id"]?.stringValue == conversation)
                #expect(bodies[1]["conversation"]?["metadata"]?["title"] == "Hooks")
                #expect(bodies[3]["event"]?["actor"] == ["name": "Order bot"])
                #expect(bodies[3]["message"]?["id"]?.stringValue == message)
                #expect(bodies[4]["event"]?["actor"] == ["user_id": "bob"])
                #expect(bodies[5]["message"]?["id"]?.stringValue == message)
                #expect(bodies[6]["conversation"]?["id"]?.stringValue == conversation)
                for delivery in got {
                    #expect(delivery.headers["layer-webhook-signature"] == Self.signature(delivery.body))
                }
            }
        }
    }

    @Test(
        "Every change of a conversation or a channel reaches a 2.0 or 3.0 webhook by its Type.action name, in order",
        arguments: ["2.0", "3.0"])
    func objectEvents(_ version: String) async throws {
        let receiver = Receiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                let events = [
                    "Message.created", "Message.deleted", "Receipt.created", "Conversation.created",
                    "Conversation.updated", "Conversation.deleted", "Participation.created", "Participation.deleted",
                    "Channel.created", "Channel.updated", "Channel.deleted", "Membership.created", "Membership.deleted",
                ]
                let (api, _) = try await Self.register(harness, port: port, version: version, events: events)
                let alice = try await harness.user("alice")
                let bob = try await harness.user("bob")
                let carol = try await harness.user("carol")

                let conversation = try await alice.conversation(with: ["bob"])
                let title: JSONValue = [["operation": "set", "property": "metadata.title", "value": "Hooks"]]
                #expect(try await alice.patch("/\(path(conversation))", title).status == 204)
                let add: JSONValue = [["operation": "add", "property": "participants", "value": "carol"]]
                #expect(try await alice.patch("/\(path(conversation))", add).status == 204)
                let first = try await alice.send("one", to: conversation)
                let second = try await alice.send("two", to: conversation)
                #expect(
                    try await bob.post("/\(path(try #require(first["id"]?.stringValue)))/receipts", ["type": "read"]).status
                        == 204)
                #expect(try await carol.post("/\(path(conversation))/mark_all_read", [:]).status == 204)
                let remove: JSONValue = [["operation": "remove", "property": "participants", "value": "carol"]]
                #expect(try await alice.patch("/\(path(conversation))", remove).status == 204)
                let uuid = String(conversation.split(separator: "/").last!)
                let secondUUID = String(try #require(second["id"]?.stringValue).split(separator: "/").last!)
                #expect(try await api.delete("/conversations/\(uuid)/messages/\(secondUUID)").status == 204)
                #expect(try await alice.delete("/\(path(conversation))?mode=all_participants").status == 204)

                let channel = try await alice.channel("hooks", members: ["bob"])
                #expect(try await carol.join(channel).status == 204)
                let topic: JSONValue = [["operation": "set", "property": "metadata.topic", "value": "deliveries"]]
                #expect(try await alice.patch("/\(path(channel))", topic).status == 204)
                let posted = try await bob.post("/\(path(channel))/messages", .object(textMessage("in the channel")))
                let channelMessage = try #require(posted.json?["id"]?.stringValue)
                #expect(try await alice.delete("/\(path(channelMessage))").status == 204)
                #expect(try await carol.leave(channel).status == 204)
                #expect(try await alice.delete("/\(path(channel))").status == 204)

                let conversationEvents = [
                    "Conversation.created", "Conversation.updated", "Participation.created", "Message.created",
                    "Message.created", "Receipt.created", "Receipt.created", "Participation.deleted", "Message.deleted",
                    "Conversation.deleted",
                ]
                let channelEvents = [
                    "Channel.created", "Membership.created", "Channel.updated", "Message.created", "Message.deleted",
                    "Membership.deleted", "Channel.deleted",
                ]
                let got = try await receiver.waitFor(conversationEvents.count + channelEvents.count)
                #expect(got.count == conversationEvents.count + channelEvents.count)
                for delivery in got {
                    #expect(delivery.headers["layer-webhook-signature"] == Self.signature(delivery.body))
                    #expect(delivery.headers["user-agent"] == "layer-webhooks/\(version)")
                }
                let bodies = try got.map { try JSONDecoder().decode(JSONValue.self, from: $0.body) }
                let inChannel = bodies.filter {
                    $0["channel"] != nil || $0["membership"] != nil || $0["message"]?["channel"] != nil
                }
                let inConversation = bodies.filter { body in !inChannel.contains(body) }
                #expect(inConversation.map { $0["event"]?["type"]?.stringValue } == conversationEvents)
                #expect(inChannel.map { $0["event"]?["type"]?.stringValue } == channelEvents)
                guard inConversation.count == conversationEvents.count, inChannel.count == channelEvents.count else { return }

                #expect(inConversation[0]["actor"]?["user_id"] == "alice")
                #expect(inConversation[0]["conversation"]?["id"]?.stringValue == conversation)
                #expect(inConversation[1]["conversation"]?["metadata"]?["title"] == "Hooks")
                #expect(inConversation[2]["changes"] == [["id": .string(LayerID.identity(userID: "carol")), "user_id": "carol"]])
                #expect(inConversation[3]["message"]?["id"] == first["id"])
                #expect(inConversation[3]["actor"]?["user_id"] == "alice")
                let position = try #require(first["position"])
                #expect(inConversation[5]["actor"]?["user_id"] == "bob")
                #expect(inConversation[5]["receipt"] == ["type": "Read", "positions": ["from": position, "to": position]])
                #expect(inConversation[5]["conversation"]?["id"]?.stringValue == conversation)
                // Marking all read is one receipt of the range it covers.
                #expect(inConversation[6]["actor"]?["user_id"] == "carol")
                #expect(inConversation[6]["receipt"]?["positions"]?["to"] == second["position"])
                #expect(inConversation[7]["changes"]?[0]?["user_id"] == "carol")
                #expect(inConversation[8]["message"]?["id"] == second["id"])
                #expect(inConversation[9]["conversation"]?["id"]?.stringValue == conversation)

                #expect(inChannel[0]["channel"]?["id"]?.stringValue == channel)
                #expect(inChannel[0]["channel"]?["name"] == "hooks")
                #expect(inChannel[0]["actor"]?["user_id"] == "alice")
                #expect(inChannel[1]["membership"]?["identity"]?["user_id"] == "carol")
                #expect(inChannel[1]["membership"]?["role"] == "user")
                #expect(inChannel[2]["channel"]?["metadata"]?["topic"] == "deliveries")
                #expect(inChannel[3]["message"]?["id"]?.stringValue == channelMessage)
                // Rendered when delivered: a message deleted by then is told by its ids, without its content.
                let parts = inChannel[3]["message"]?["parts"]
                #expect(parts == nil || parts?[0]?["body"] == "in the channel")
                #expect(inChannel[3]["actor"]?["user_id"] == "bob")
                #expect(inChannel[4]["message"]?["id"]?.stringValue == channelMessage)
                #expect(inChannel[5]["membership"]?["id"]?.stringValue == "\(channel)/members/carol")
                #expect(inChannel[6]["channel"]?["id"]?.stringValue == channel)
            }
        }
    }

    @Test("Two replicas of the sync service share the outbox: each event is delivered once")
    func twoReplicasDeliverOnce() async throws {
        let receiver = Receiver()
        var first = SyncSettings()
        first.webhookPrivateTargets = true
        let settings = first
        try await WebPageServer.run(receiver.routes) { port in
            try await SyncHarness.run(settings: settings) { harness in
                // A second replica on the same database, with its own deliverer.
                var second = settings
                second.authURL = harness.client.baseURL
                try await LiveServer.run(
                    [SyncService.configured(second)], settings: harness.fixture.server.settings
                ) { _ in
                    _ = try await Self.register(harness, port: port, version: "1.0", events: ["message.sent"])
                    let alice = try await harness.user("alice")
                    _ = try await harness.user("bob")
                    var sent: Set<String> = []
                    for index in 0..<4 {
                        let conversation = try await alice.conversation(with: ["bob"], distinct: false)
                        for text in 0..<5 {
                            let message = try await alice.send("\(index).\(text)", to: conversation)
                            sent.insert(try #require(message["id"]?.stringValue))
                        }
                    }
                    let got = try await receiver.waitFor(sent.count)
                    try await Task.sleep(for: .seconds(2))  // anything delivered twice would be here by now
                    let all = receiver.deliveries.withLock { $0 }
                    let ids = try all.map {
                        try JSONDecoder().decode(JSONValue.self, from: $0.body)["message"]?["id"]?.stringValue
                    }
                    #expect(got.count == sent.count)
                    #expect(all.count == sent.count, "no event was delivered twice")
                    #expect(Set(ids.compactMap { $0 }) == sent)
                }
            }
        }
    }

    @Test("A receiver too slow for the whole retry window turns the webhook inactive; activated again, it gets the kept event")
    func slowReceiverDeactivatesAndActivateDeliversTheKeptEvent() async throws {
        let receiver = Receiver()
        receiver.delay.withLock { $0 = .seconds(1) }
        var configured = SyncSettings()
        configured.webhookPrivateTargets = true
        configured.webhookTimeout = .milliseconds(300)
        configured.webhookRetryWindow = .seconds(2)
        let settings = configured
        try await WebPageServer.run(receiver.routes) { port in
            try await SyncHarness.run(settings: settings) { harness in
                let (api, webhookID) = try await Self.register(harness, port: port, version: "1.0", events: ["message.sent"])
                let accept = "application/vnd.layer.webhooks+json; version=1.0"
                let path = "/apps/\(api.appID)/webhooks/\(webhookID.split(separator: "/").last!)"
                let alice = try await harness.user("alice")
                _ = try await harness.user("bob")
                let message = try await alice.send("too slow", to: try await alice.conversation(with: ["bob"]))

                var webhook: JSONValue?
                for _ in 0..<600 {
                    webhook = try await api.client.request(.GET, path, headers: api.auth, accept: accept).json
                    if webhook?["status"] == "inactive" { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(webhook?["status"] == "inactive")
                #expect(webhook?["status_reason"]?.stringValue?.hasPrefix("Deliveries failed for 2 seconds") == true)
                let attempts = receiver.deliveries.withLock { $0 }
                #expect(attempts.count >= 2)
                #expect(Set(attempts.map { $0.headers["layer-webhook-request-id"] }).count == 1, "one event, one request id")

                receiver.delay.withLock { $0 = nil }
                #expect(try await api.client.request(.POST, "\(path)/activate", headers: api.auth, accept: accept).status == 200)
                let all = try await receiver.waitFor(attempts.count + 1)
                let last = try #require(all.last)
                #expect(last.headers["layer-webhook-request-id"] == attempts[0].headers["layer-webhook-request-id"])
                #expect(try JSONDecoder().decode(JSONValue.self, from: last.body)["message"]?["id"] == message["id"])
                var delivered = false
                for _ in 0..<100 where !delivered {
                    let log = try await api.client.request(.GET, "\(path)/deliveries", headers: api.auth, accept: accept).json
                    delivered = log?.arrayValue?.first?["delivered_at"]?.stringValue != nil
                    if !delivered { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(delivered)
            }
        }
    }
}
