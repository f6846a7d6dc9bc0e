import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

@Suite("Server API badges and push-only notifications")
struct ServerAPIBadgeTests {
    /// The next `signal` packet whose body has this `type`.
    static func signal(_ type: String, on socket: TestWebSocket, timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await socket.next(timeout: timeout) {
            $0["type"]?.stringValue == "signal" && $0["body"]?["type"]?.stringValue == type
        }["body"] ?? .null
    }

    @Test("A badge holds the external count the app set and the user's unread conversations and messages")
    func badge() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, withBob) = try await harness.aliceAndBobInAConversation()
            let carol = try await harness.user("carol")
            let withCarol = try await carol.conversation(with: ["alice"])
            _ = try await bob.send("one", to: withBob)
            _ = try await bob.send("two", to: withBob)
            _ = try await carol.send("three", to: withCarol)
            _ = try await alice.send("mine, so read", to: withCarol)
            let api = try await harness.server()

            let fresh = try await api.get("/users/alice/badge")
            #expect(fresh.status == 200)
            #expect(fresh.json == ["external_unread_count": 0, "unread_conversation_count": 2, "unread_message_count": 3])

            let socket = try await harness.socket(alice)
            let set = try await api.put("/users/alice/badge", ["external_unread_count": 13])
            #expect(set.status == 204, "\(set.text)")
            // No APNs here: the user's connected devices hear of it as a signal.
            let pushed = try await Self.signal("badge", on: socket)
            #expect(pushed["external_unread_count"] == 13)
            #expect(pushed["unread_message_count"] == 3)
            let read = try await api.get("/users/alice/badge")
            #expect(read.json == ["external_unread_count": 13, "unread_conversation_count": 2, "unread_message_count": 3])

            // The counts are those of the conversations' own unread_message_count.
            let marked = try await api.post("/users/alice/conversations/\(bareUUID(withBob))/mark_all_read", [:])
            #expect(marked.status == 204)
            let after = try await api.get("/users/alice/badge")
            #expect(after.json == ["external_unread_count": 13, "unread_conversation_count": 1, "unread_message_count": 1])
            let list = try await api.get("/users/alice/conversations")
            let counts = list.json?.arrayValue?.compactMap { $0["unread_message_count"]?.intValue } ?? []
            #expect(counts.reduce(0, +) == 1)
            #expect(counts.filter { $0 > 0 }.count == 1)
            // Bob's badge is his own.
            let bobs = try await api.get("/users/bob/badge")
            #expect(bobs.json == ["external_unread_count": 0, "unread_conversation_count": 0, "unread_message_count": 0])
            #expect(try await api.put("/users/alice/badge", ["external_unread_count": 0]).status == 204)
            #expect(try await api.get("/users/alice/badge").json?["external_unread_count"] == 0)
            await socket.close()
        }
    }

    @Test("A badge takes a whole number from 0 for an existing user")
    func badgeInput() async throws {
        try await SyncHarness.run { harness in
            _ = try await harness.aliceAndBobInAConversation()
            let api = try await harness.server()
            for (body, property) in [
                (["external_unread_count": -1], "external_unread_count"),
                (["external_unread_count": .number(1.5)], "external_unread_count"),
                (["external_unread_count": "3"], "external_unread_count"),
                (["external_unread_count": 3_000_000_000], "external_unread_count"),
                (["external_unread_count": 3, "colour": "red"], "colour"),
            ] as [(JSONValue, String)] {
                let response = try await api.put("/users/alice/badge", body)
                #expect(response.status == 422, "\(body)")
                #expect(response.errorProperty == property, "\(body)")
            }
            let missing = try await api.put("/users/alice/badge", [:])
            #expect(missing.status == 422)
            #expect(missing.errorID == "missing_property")
            #expect(missing.errorProperty == "external_unread_count")
            #expect(try await api.put("/users/nobody/badge", ["external_unread_count": 1]).status == 404)
            #expect(try await api.get("/users/nobody/badge").status == 404)
            #expect(try await api.get("/users/alice/badge").json?["external_unread_count"] == 0)
            let anonymous = try await harness.client.request(.GET, "/apps/\(harness.appID)/users/alice/badge")
            #expect(anonymous.status == 401)
        }
    }

    @Test("A push-only notification reaches every connected device of its recipients, and only theirs")
    func notification() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let dave = try await harness.user("dave")
            let bobPhone = try await harness.socket(bob)
            let bobLaptop = try await harness.events(bob)
            #expect(bobLaptop.status == 200)
            let carolPhone = try await harness.socket(carol)
            let davePhone = try await harness.socket(dave)
            let api = try await harness.server()

            let notification: JSONValue = ["title": "Sale", "text": "Everything half price", "sound": "chime.aiff"]
            let sent = try await api.post(
                "/notifications",
                ["recipients": ["bob", "layer:///identities/carol", "bob", "nobody"], "notification": notification])
            #expect(sent.status == 202, "\(sent.text)")
            #expect(sent.body.readableBytes == 0)

            for (name, socket) in [("bob", bobPhone), ("carol", carolPhone)] {
                let signal = try await Self.signal("notification", on: socket)
                #expect(signal["notification"] == notification, "\(name)")
                #expect(signal["sent_at"]?.stringValue.flatMap(LayerTimestamp.date) != nil, "\(name)")
            }
            let event = try await bobLaptop.next { $0.event == "signal" }
            #expect(event.json?["type"] == "notification")
            #expect(event.json?["notification"] == notification)
            do {
                let packet = try await Self.signal("notification", on: davePhone, timeout: .milliseconds(500))
                Issue.record("dave got a notification meant for others: \(packet)")
            } catch is PushTimeout {}
            for socket in [bobPhone, carolPhone, davePhone] { await socket.close() }
            bobLaptop.close()
        }
    }

    @Test("A notification to a thousand recipients with long ids reaches the last of them")
    func notificationToManyRecipients() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let last = String(repeating: "z", count: 100)
            let zed = try await harness.user(last)
            let socket = try await harness.socket(zed)
            let api = try await harness.server()
            let others = (0..<999).map { JSONValue.string(String(format: "user-%04d-", $0) + String(repeating: "x", count: 90)) }
            let sent = try await api.post(
                "/notifications", ["recipients": .array(others + [.string(last)]), "notification": ["text": "All hands"]])
            #expect(sent.status == 202, "\(sent.text)")
            let signal = try await Self.signal("notification", on: socket)
            #expect(signal["notification"]?["text"] == "All hands")
            await socket.close()
        }
    }

    @Test("A push-only notification needs 1 to 1000 recipients and a notification object")
    func notificationInput() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let note: JSONValue = ["text": "Hi"]
            for (body, id, property) in [
                (["notification": note], "missing_property", "recipients"),
                (["recipients": [], "notification": note], "invalid_property", "recipients"),
                (["recipients": "bob", "notification": note], "invalid_property", "recipients"),
                (["recipients": ["bob", 5], "notification": note], "invalid_property", "recipients.1"),
                (
                    ["recipients": .array((0...1000).map { .string("u\($0)") }), "notification": note], "invalid_property",
                    "recipients"
                ),
                (["recipients": ["bob"]], "missing_property", "notification"),
                (["recipients": ["bob"], "notification": .null], "missing_property", "notification"),
                (["recipients": ["bob"], "notification": "Hi"], "invalid_property", "notification"),
                (
                    ["recipients": ["bob"], "notification": ["text": .string(String(repeating: "a", count: 5000))]],
                    "invalid_property", "notification"
                ),
                (["recipients": ["bob"], "notification": note, "sender_id": "alice"], "invalid_property", "sender_id"),
            ] as [(JSONValue, String, String)] {
                let response = try await api.post("/notifications", body)
                #expect(response.status == 422, "\(body)")
                #expect(response.errorID == id, "\(body)")
                #expect(response.errorProperty == property, "\(body)")
            }
            let anonymous = try await harness.client.request(
                .POST, "/apps/\(harness.appID)/notifications", json: ["recipients": ["bob"], "notification": note])
            #expect(anonymous.status == 401)
        }
    }
}
