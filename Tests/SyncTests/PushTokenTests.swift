import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// Push tokens (`POST /push_tokens`, `DELETE /push_tokens/<device_id>`) and the operator's push
/// providers (`/admin/apps/<app>/push…`).
@Suite("Push notifications: tokens and providers")
struct PushTokenTests {
    typealias Harness = PushNotificationHarness

    func tokens(_ harness: SyncHarness, of user: String) async throws -> [String: String] {
        let rows = try await harness.fixture.server.postgres.query(
            """
            SELECT device_id, provider || ':' || token FROM sync.push_tokens
            WHERE app_id = \(harness.fixture.app.id) AND user_id = \(user)
            """)
        var found: [String: String] = [:]
        for try await (device, token) in rows.decode((String, String).self) { found[device] = token }
        return found
    }

    @Test("A device registers its token (202) and forgets it (202); gcm is FCM; a token moves to whoever registers it last")
    func registerAndForget() async throws {
        try await SyncHarness.run { harness in
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let apple = Harness.apnsToken()
            #expect(
                try await bob.post(
                    "/push_tokens",
                    [
                        "token": .string(apple.uppercased()), "type": "apns", "device_id": "phone",
                        "apns_bundle_id": "com.example.chat", "ios_version": "17.2",
                    ]
                ).status == 202)
            #expect(
                try await bob.post(
                    "/push_tokens", ["token": "fcm-token-1", "type": "gcm", "device_id": "tablet", "gcm_sender_id": "1234"]
                ).status == 202)
            #expect(try await tokens(harness, of: "bob") == ["phone": "apns:\(apple)", "tablet": "fcm:fcm-token-1"])

            // The same device registers a new token: replaced. Carol signs in on bob's old tablet.
            #expect(
                try await bob.post("/push_tokens", ["token": "fcm-token-2", "type": "fcm", "device_id": "tablet"]).status == 202)
            #expect(
                try await carol.post("/push_tokens", ["token": "fcm-token-2", "type": "fcm", "device_id": "tablet"]).status == 202
            )
            #expect(try await tokens(harness, of: "bob") == ["phone": "apns:\(apple)"])
            #expect(try await tokens(harness, of: "carol") == ["tablet": "fcm:fcm-token-2"])

            #expect(try await bob.delete("/push_tokens/phone").status == 202)
            #expect(try await bob.delete("/push_tokens/phone").status == 202, "forgetting is idempotent")
            #expect(try await tokens(harness, of: "bob").isEmpty)
            #expect(try await tokens(harness, of: "carol").count == 1, "one user cannot forget another's")
        }
    }

    static let badBodies: [(body: JSONValue, property: String)] = [
        (["type": "apns", "device_id": "d"], "token"),
        (["token": "abcd", "device_id": "d"], "type"),
        (["token": "abcd", "type": "wns", "device_id": "d"], "type"),
        (["token": "not-hex!", "type": "apns", "device_id": "d"], "token"),
        (["token": "abcdef0123456789", "type": "apns"], "device_id"),
        (["token": "a b", "type": "fcm", "device_id": "d"], "token"),
        (["token": "abcdef0123456789", "type": "apns", "device_id": "d", "ios_version": ""], "ios_version"),
    ]

    @Test("A bad registration is refused naming the field, and stores nothing", arguments: 0..<7)
    func badRegistrations(_ index: Int) async throws {
        let (body, property) = Self.badBodies[index]
        try await SyncHarness.run { harness in
            let bob = try await harness.user("bob")
            let response = try await bob.post("/push_tokens", body)
            #expect(response.status == 422, "\(response.text)")
            #expect(response.json?["data"]?["property"]?.stringValue == property, "\(response.text)")
            #expect(try await tokens(harness, of: "bob").isEmpty)
        }
    }

    @Test("A user keeps 25 tokens: the 26th forgets the least recently registered one")
    func leastRecentlyUsedEviction() async throws {
        try await SyncHarness.run { harness in
            let bob = try await harness.user("bob")
            for index in 0..<25 {
                #expect(
                    try await bob.post(
                        "/push_tokens", ["token": .string("t\(index)"), "type": "fcm", "device_id": .string("d\(index)")]
                    ).status == 202)
            }
            // d0 registers again: now d1 is the least recently used.
            #expect(try await bob.post("/push_tokens", ["token": "t0", "type": "fcm", "device_id": "d0"]).status == 202)
            #expect(try await bob.post("/push_tokens", ["token": "t25", "type": "fcm", "device_id": "d25"]).status == 202)
            let kept = try await tokens(harness, of: "bob")
            #expect(kept.count == 25)
            #expect(kept["d0"] != nil)
            #expect(kept["d1"] == nil)
            #expect(kept["d25"] != nil)
        }
    }

    @Test("Logging out forgets the token that session registered; other devices keep theirs")
    func logoutForgetsItsToken() async throws {
        try await SyncHarness.run { harness in
            let phone = try await harness.user("bob")
            let tablet = try await harness.user("bob")
            #expect(
                try await phone.post("/push_tokens", ["token": "phone-token", "type": "fcm", "device_id": "phone"]).status == 202)
            #expect(
                try await tablet.post("/push_tokens", ["token": "tablet-token", "type": "fcm", "device_id": "tablet"]).status
                    == 202)
            #expect(try await harness.client.request(.DELETE, "/sessions/\(phone.token)").status == 204)
            var kept: [String: String] = [:]
            for _ in 0..<100 {
                kept = try await tokens(harness, of: "bob")
                if kept.count == 1 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(kept == ["tablet": "fcm:tablet-token"])
        }
    }

    @Test("The operator sets, shows and removes an app's providers; keys are sealed at rest and never shown")
    func providersThroughTheAdminAPI() async throws {
        try await Harness.run { push in
            let harness = push.harness
            #expect(try await push.providers() == ["apns": nil, "fcm": nil])
            let apns = try await push.setProvider("apns", FakePushServices.apnsCredentials(sandbox: true))
            #expect(apns.status == 200, "\(apns.text)")
            #expect(apns.json?["provider"] == "apns")
            #expect(apns.json?["team_id"]?.stringValue == FakePushServices.teamID)
            #expect(apns.json?["key_id"]?.stringValue == FakePushServices.keyID)
            #expect(apns.json?["topic"]?.stringValue == FakePushServices.topic)
            #expect(apns.json?["environment"] == "sandbox")
            #expect(apns.json?["status"] == "ok")
            #expect(!apns.text.contains("PRIVATE KEY"))
            let fcm = try await push.setProvider(
                "fcm", FakePushServices.fcmCredentials(tokenURL: "https://oauth2.googleapis.com/token"))
            #expect(fcm.status == 200, "\(fcm.text)")
            #expect(fcm.json?["project_id"]?.stringValue == FakePushServices.projectID)
            #expect(fcm.json?["client_email"]?.stringValue == FakePushServices.clientEmail)
            #expect(!fcm.text.contains("PRIVATE KEY"))
            let shown = try await push.providers()
            #expect(shown?["apns"]?["status"] == "ok")
            #expect(shown?["fcm"]?["status"] == "ok")

            let rows = try await harness.fixture.server.postgres.query(
                "SELECT encode(sealed_key, 'escape') FROM sync.push_providers")
            var sealed = 0
            for try await text in rows.decode(String.self) {
                sealed += 1
                #expect(!text.contains("PRIVATE KEY"), "sealed, not the PEM")
            }
            #expect(sealed == 2)

            let path = "/admin/apps/\(harness.appID)/push/apns"
            #expect(try await harness.client.request(.DELETE, path, headers: push.operatorAuth).status == 204)
            #expect(try await harness.client.request(.DELETE, path, headers: push.operatorAuth).status == 404)
            #expect(try await push.providers()?["apns"] == .null)
            #expect(
                try await harness.client.request(
                    .PUT, "/admin/apps/\(harness.appID)/push/wns", headers: push.operatorAuth, json: [:]
                ).status == 404)
            #expect(
                try await harness.client.request(
                    .GET, "/admin/apps/\(UUID().uuidString.lowercased())/push", headers: push.operatorAuth
                ).status == 404)
            #expect(try await harness.client.request(.GET, "/admin/apps/\(harness.appID)/push").status == 401)
        }
    }

    /// A field of good credentials spoiled: the provider, the field named in the 422, and the bad value.
    static let spoiled: [(provider: String, property: String, value: JSONValue?)] = [
        ("apns", "team_id", "short"), ("apns", "key_id", nil),
        ("apns", "private_key", "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"),
        ("apns", "topic", ""), ("apns", "environment", "staging"),
        ("fcm", "service_account.private_key", "garbage"), ("fcm", "service_account.project_id", nil),
        ("fcm", "service_account", 3),
    ]

    @Test("Bad credentials are refused naming the field, and change nothing", arguments: 0..<8)
    func badCredentials(_ index: Int) async throws {
        let (provider, property, value) = Self.spoiled[index]
        try await Harness.run { push in
            let good =
                provider == "apns"
                ? FakePushServices.apnsCredentials() : FakePushServices.fcmCredentials(tokenURL: "https://example.com/token")
            guard case .object(var body) = good else { return }
            if let field = property.split(separator: ".").dropFirst().first.map(String.init),
                case .object(var account)? = body["service_account"]
            {
                account[field] = value
                body["service_account"] = .object(account)
            } else {
                body[property] = value
            }
            let response = try await push.setProvider(provider, .object(body))
            #expect(response.status == 422, "\(response.text)")
            #expect(response.json?["data"]?["property"]?.stringValue == property, "\(response.text)")
            #expect(try await push.providers() == ["apns": nil, "fcm": nil])
        }
    }
}
