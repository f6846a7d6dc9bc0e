import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

extension LayerDevTests {
    /// `layer dev` pointed at APNs and FCM played by the test: the operator sets both providers
    /// with `layer admin push`, a phone registers its token, and a message reaches it through each.
    @Test("layer admin push sets APNs and FCM on layer dev; a message reaches an offline phone through each")
    func pushThroughLayerDev() async throws {
        try await FakePushServices.run { services in
            let environment = [
                "LAYER_APNS_URL": services.baseURL, "LAYER_FCM_URL": services.baseURL,
                "LAYER_FCM_TOKEN_URL": "\(services.baseURL)/token", "LAYER_PUSH_CA_FILE": services.caFile,
            ]
            try await withDev(environment: environment) { directory, info in
                let common = ["--data-dir", directory.path]
                let app = info.app_id
                let keyFile = directory.appendingPathComponent("AuthKey.p8")
                try Data(FakePushServices.apnsKey.pemRepresentation.utf8).write(to: keyFile)
                let apns = try await layer(
                    [
                        "admin", "push", "set-apns", "--app", app, "--key-file", keyFile.path, "--key-id", FakePushServices.keyID,
                        "--team-id", FakePushServices.teamID, "--topic", FakePushServices.topic,
                    ] + common)
                #expect(apns.hasPrefix("apns  ok  team_id=\(FakePushServices.teamID)"), "\(apns)")
                let accountFile = directory.appendingPathComponent("service-account.json")
                let account = FakePushServices.fcmCredentials(tokenURL: "\(services.baseURL)/token")["service_account"]
                try Data(try #require(account).jsonText.utf8).write(to: accountFile)
                let fcm = try await layer(
                    ["admin", "push", "set-fcm", "--app", app, "--service-account", accountFile.path] + common)
                #expect(fcm.hasPrefix("fcm  ok  project_id=\(FakePushServices.projectID)"), "\(fcm)")
                let shown = try await layer(["admin", "push", "show", "--app", app] + common)
                #expect(shown.split(separator: "\n").count == 2 && !shown.contains("PRIVATE"), "\(shown)")

                let client = TestClient(baseURL: info.base_url)
                func session(_ user: String) async throws -> [(String, String)] {
                    let nonce = try #require(try await client.request(.POST, "/nonces").json?["nonce"]?.stringValue)
                    let token = try await layer(["token", "--user", user, "--nonce", nonce] + common)
                    let created = try await client.request(
                        .POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(app)])
                    return AuthFixture.sessionHeader(try #require(created.json?["session_token"]?.stringValue))
                }
                let alice = try await session("alice")
                let bob = try await session("bob")
                let appleToken = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
                for (token, type, device) in [(appleToken, "apns", "iphone"), ("fcm-token-of-bob", "gcm", "android")] {
                    let registered = try await client.request(
                        .POST, "/push_tokens", headers: bob,
                        json: ["token": .string(token), "type": .string(type), "device_id": .string(device)])
                    #expect(registered.status == 202, "\(registered.text)")
                }
                let conversation = try await client.request(
                    .POST, "/conversations", headers: alice, json: ["participants": ["bob"]])
                let conversationPath = try #require(
                    conversation.json?["id"]?.stringValue?.replacingOccurrences(of: "layer:///", with: "/"))
                let sent = try await client.request(
                    .POST, "\(conversationPath)/messages", headers: alice,
                    json: [
                        "parts": [["mime_type": "text/plain", "body": "hi"]], "notification": ["title": "Alice", "text": "hi"],
                    ])
                #expect(sent.status == 201)
                let pushes = try await services.waitForPushes(2)
                #expect(services.pushes(to: appleToken).first?.json?["aps"]?["alert"]?["body"] == "hi")
                #expect(services.pushes(to: "fcm-token-of-bob").first?.json?["message"]?["notification"]?["body"] == "hi")
                #expect(pushes.count == 2)

                _ = try await layer(["admin", "push", "remove", "--app", app, "apns"] + common)
                #expect(try await layer(["admin", "push", "show", "--app", app] + common).hasPrefix("apns  not set"))
            }
        }
    }
}
