import Foundation
import JWTKit
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// Push notifications through APNs and FCM, both played by real HTTP/2 servers over TLS that
/// check what Apple and Google check: every message reaches each recipient device that holds a
/// token and is not connected, with the right headers, provider token and payload.
@Suite("Push notifications: delivery")
struct PushDeliveryTests {
    typealias Harness = PushNotificationHarness

    /// The claims of a request's provider JWT (not verified here: the fake APNs verified it).
    static func jwtParts(_ request: FakePushServices.Request) throws -> (header: JSONValue, claims: JSONValue) {
        let token = try #require(request.headers["authorization"]?.split(separator: " ").last)
        let parts = token.split(separator: ".").map(String.init)
        func decode(_ text: String) throws -> JSONValue {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            return try JSONDecoder().decode(JSONValue.self, from: try #require(Data(base64Encoded: base64)))
        }
        return (try decode(parts[0]), try decode(parts[1]))
    }

    @Test(
        "A message reaches each offline recipient device through APNs, with its headers, provider token, alert, badge and ids; nothing for the sender or a connected device"
    )
    func apnsPushPerOfflineDevice() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(with: ["bob", "carol"])
            let bobPhone = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            let bobTablet = try await push.register(
                bob, type: "apns", token: Harness.apnsToken(), device: "bob-tablet", bundle: "com.example.tablet")
            let alicePhone = try await push.register(alice, type: "apns", token: Harness.apnsToken(), device: "alice-phone")
            let carolPhone = try await push.register(carol, type: "apns", token: Harness.apnsToken(), device: "carol-phone")
            // Carol's phone is connected with the session it registered its token with.
            let carolSocket = try await push.socket(carol)
            defer { Task { await carolSocket.close() } }
            try await Task.sleep(for: .milliseconds(200))

            let message = try await push.send(
                "hello", from: alice, to: conversation,
                notification: ["title": "Alice", "text": "hello", "sound": "chime.aiff", "category": "MESSAGE"])
            let pushes = try await push.services.waitForPushes(2)
            try await Task.sleep(for: .milliseconds(500))  // anything more would be here by now
            #expect(push.services.pushes.withLock { $0.count } == 2, "one per offline device of bob")
            #expect(push.services.pushes(to: alicePhone).isEmpty, "not to the sender")
            #expect(push.services.pushes(to: carolPhone).isEmpty, "not to a connected device")

            let phone = try #require(push.services.pushes(to: bobPhone).first)
            #expect(phone.headers[":version"] == "2", "HTTP/2")
            #expect(phone.path == "/3/device/\(bobPhone)")
            #expect(phone.headers["apns-topic"] == FakePushServices.topic)
            #expect(push.services.pushes(to: bobTablet).first?.headers["apns-topic"] == "com.example.tablet")
            #expect(phone.headers["apns-push-type"] == "alert")
            #expect(phone.headers["apns-priority"] == "10")
            let messageUUID = try #require(message["id"]?.stringValue?.split(separator: "/").last.map(String.init))
            #expect(phone.headers["apns-collapse-id"] == messageUUID)
            let expiration = try #require(phone.headers["apns-expiration"].flatMap(Double.init))
            #expect(expiration > Date().timeIntervalSince1970 + 3600)
            let (header, claims) = try Self.jwtParts(phone)
            #expect(header["alg"] == "ES256")
            #expect(header["kid"]?.stringValue == FakePushServices.keyID)
            #expect(claims["iss"]?.stringValue == FakePushServices.teamID)
            let body = try #require(phone.json)
            #expect(body["aps"]?["alert"]?["title"] == "Alice")
            #expect(body["aps"]?["alert"]?["body"] == "hello")
            #expect(body["aps"]?["sound"] == "chime.aiff")
            #expect(body["aps"]?["category"] == "MESSAGE")
            #expect(body["aps"]?["badge"] == 1)
            #expect(body["aps"]?["thread-id"]?.stringValue == conversation.split(separator: "/").last.map(String.init))
            #expect(body["layer"]?["conversation_identifier"]?.stringValue == conversation)
            #expect(body["layer"]?["message_identifier"] == message["id"])
            #expect(try await push.pendingJobs() == 0)
        }
    }

    @Test("FCM gets the message through the HTTP v1 API with an access token exchanged once for the service account's JWT")
    func fcmPushWithOneTokenExchange() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let token = try await push.register(bob, type: "gcm", token: Harness.fcmToken(), device: "bob-android")
            for text in ["one", "two", "three"] {
                _ = try await push.send(
                    text, from: alice, to: conversation,
                    notification: ["title": "Alice", "text": .string(text), "data": ["deep_link": "chat/1", "n": 3]])
            }
            let pushes = try await push.services.waitForPushes(3)
            #expect(pushes.count == 3)
            #expect(push.services.exchanges.withLock { $0.count } == 1, "the access token is reused")
            let exchange = try #require(push.services.exchanges.withLock { $0.first })
            #expect(exchange.headers["content-type"] == "application/x-www-form-urlencoded")
            let first = try #require(pushes.first { $0.json?["message"]?["notification"]?["body"] == "one" })
            #expect(first.path == "/v1/projects/\(FakePushServices.projectID)/messages:send")
            #expect(first.headers[":version"] == "2")
            let message = try #require(first.json?["message"])
            #expect(message["token"]?.stringValue == token)
            #expect(message["notification"] == ["title": "Alice", "body": "one"])
            #expect(message["data"]?["deep_link"] == "chat/1")
            #expect(message["data"]?["n"] == "3", "FCM data values are strings")
            let layerText = try #require(message["data"]?["layer"]?.stringValue)
            let layer = try JSONDecoder().decode(JSONValue.self, from: Data(layerText.utf8))
            #expect(layer["conversation_identifier"]?.stringValue == conversation)
            #expect(message["android"]?["priority"] == "high")
            #expect(
                Set(pushes.compactMap { $0.json?["message"]?["notification"]?["body"]?.stringValue }) == ["one", "two", "three"])
        }
    }

    @Test("Per-recipient overrides, defaults for the others, and a silent push when the send has no notification")
    func overridesAndSilentPushes() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(with: ["bob", "carol"])
            let bobToken = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            let carolToken = try await push.register(carol, type: "fcm", token: Harness.fcmToken(), device: "carol-phone")
            _ = try await push.send(
                "hi", from: alice, to: conversation,
                notification: [
                    "text": "New message", "sound": "default",
                    "recipients": [["recipient": "layer:///identities/bob", "text": "Hallo Bob", "sound": "ping.aiff"]],
                ])
            _ = try await push.services.waitForPushes(2)
            let bobPush = try #require(push.services.pushes(to: bobToken).first?.json)
            #expect(bobPush["aps"]?["alert"]?["body"] == "Hallo Bob")
            #expect(bobPush["aps"]?["sound"] == "ping.aiff")
            let carolPush = try #require(push.services.pushes(to: carolToken).first?.json?["message"])
            #expect(carolPush["notification"]?["body"] == "New message")
            #expect(carolPush["android"]?["notification"]?["sound"] == "default")

            // No notification: the app is woken to sync, nothing is shown.
            _ = try await push.send("quiet", from: alice, to: conversation, notification: nil)
            _ = try await push.services.waitForPushes(4)
            let silent = try #require(push.services.pushes(to: bobToken).last)
            #expect(silent.headers["apns-push-type"] == "background")
            #expect(silent.headers["apns-priority"] == "5")
            #expect(silent.json?["aps"]?["content-available"] == 1)
            #expect(silent.json?["aps"]?["alert"] == nil)
            #expect(silent.json?["aps"]?["badge"] == 2)
            let silentFCM = try #require(push.services.pushes(to: carolToken).last?.json?["message"])
            #expect(silentFCM["notification"] == nil)
            #expect(silentFCM["android"]?["priority"] == "normal")
            #expect(silentFCM["data"]?["badge"] == "2")
        }
    }

    @Test("Badges: a read sends a silent badge update; the app's external count is added and pushed when set")
    func badgeUpdates() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let token = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            var last: JSONValue = .null
            for text in ["a", "b", "c"] {
                last = try await push.send(text, from: alice, to: conversation, notification: ["text": .string(text)])
            }
            let alerts = try await push.services.waitForPushes(3)
            // Each push carries the badge as it is when the push leaves: the count at least of its
            // own message, and the last one all three.
            let badges = alerts.compactMap { $0.json?["aps"]?["badge"]?.numberValue }
            #expect(badges.count == 3 && badges.allSatisfy { (1...3).contains($0) } && badges.max() == 3, "\(badges)")

            // Bob reads the last message on another device: his phone's badge goes to 2, then 0.
            let read = try await bob.post("/\(path(try #require(last["id"]?.stringValue)))/receipts", ["type": "read"])
            #expect(read.status == 204)
            let afterRead = try await push.services.waitForPushes(4)
            let badge = try #require(afterRead.last)
            #expect(badge.path == "/3/device/\(token)")
            #expect(badge.headers["apns-push-type"] == "background")
            #expect(badge.json?["aps"]?["badge"] == 2)
            let all = try await bob.post("/\(path(conversation))/mark_all_read", [:])
            #expect(all.status == 204, "\(all.text)")
            let afterAll = try await push.services.waitForPushes(5)
            #expect(afterAll.last?.json?["aps"]?["badge"] == 0)
            #expect(badge.json?["aps"]?["alert"] == nil)

            // The app's backend sets its own count: pushed at once, added to the unread messages.
            let server = try await harness.server()
            let set = try await server.request(.PUT, "/users/bob/badge", ["external_unread_count": 5])
            #expect(set.status == 204)
            let afterSet = try await push.services.waitForPushes(6)
            #expect(afterSet.last?.json?["aps"]?["badge"] == 5)
            _ = try await push.send("d", from: alice, to: conversation, notification: ["text": "d"])
            let afterSend = try await push.services.waitForPushes(7)
            #expect(afterSend.last?.json?["aps"]?["badge"] == 6)
        }
    }

    @Test("Announcements and push-only notifications are pushed too; a muted conversation is not")
    func announcementsNotificationsAndMute() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let token = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            let server = try await harness.server()
            let announced = try await server.request(
                .POST, "/announcements",
                [
                    "recipients": ["bob"], "sender": ["name": "The Team"],
                    "parts": [["body": "News", "mime_type": "text/plain"]], "notification": ["title": "Team", "text": "News"],
                ])
            #expect(announced.status == 202, "\(announced.text)")
            let first = try await push.services.waitForPushes(1)
            #expect(first.first?.json?["aps"]?["alert"]?["body"] == "News")
            #expect(
                first.first?.json?["layer"]?["announcement_identifier"]?.stringValue?.hasPrefix("layer:///announcements/") == true
            )

            let notified = try await server.request(
                .POST, "/notifications",
                ["recipients": ["bob"], "notification": ["text": "Your order shipped", "data": ["order": "42"]]])
            #expect(notified.status == 202)
            let second = try await push.services.waitForPushes(2)
            #expect(second.last?.json?["aps"]?["alert"]?["body"] == "Your order shipped")
            #expect(second.last?.json?["data"]?["order"] == "42")

            // Bob mutes the conversation (his private metadata): its messages are not pushed to him.
            let muted = try await bob.patch(
                "/\(path(conversation))", [["operation": "set", "property": "private_metadata.muted", "value": "true"]])
            #expect(muted.status == 204)
            _ = try await push.send("shh", from: alice, to: conversation, notification: ["text": "shh"])
            for _ in 0..<200 where try await push.pendingJobs() > 0 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await push.pendingJobs() == 0, "its job was done")
            #expect(push.services.pushes(to: token).count == 2, "with nothing sent")
        }
    }
}
