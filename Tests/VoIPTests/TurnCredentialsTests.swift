import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import LayerVoIP
import Testing

/// `GET /turn-credentials` follows the TURN REST API convention coturn checks with
/// `use-auth-secret`.
@Suite struct TurnCredentialsTests {
    @Test("Credentials name the expiry and the user, and the password is the HMAC-SHA1 of that name under the shared secret")
    func credentialsFollowTheConvention() async throws {
        let settings = VoIPSettings(
            stunPort: 0, turnSecret: "shared-with-coturn", turnURIs: ["turn:turn.example.com:3478?transport=udp"],
            turnTTLSeconds: 600)
        try await VoIPHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            let before = Int(Date().timeIntervalSince1970)
            let response = try await alice.get("/turn-credentials")
            #expect(response.status == 200, "\(response.text)")
            let body = try #require(response.json)
            let username = try #require(body["username"]?.stringValue)
            let parts = username.split(separator: ":", maxSplits: 1)
            let expiry = try #require(Int(parts.first ?? ""))
            #expect(parts.last == "alice")
            #expect((before + 600...before + 602).contains(expiry))
            #expect(body["ttl"] == 600)
            let mac = HMAC<Insecure.SHA1>.authenticationCode(
                for: Data(username.utf8), using: SymmetricKey(data: Data("shared-with-coturn".utf8)))
            #expect(body["password"]?.stringValue == Data(mac).base64EncodedString())
            let list = body["uris"]?.arrayValue ?? []
            let uris = list.compactMap { $0.stringValue }
            #expect(uris.first == "turn:turn.example.com:3478?transport=udp")
            #expect(uris.contains { $0.hasPrefix("stun:127.0.0.1:") })
            #expect(try await harness.client.request(.GET, "/turn-credentials").status == 401)
        }
    }

    @Test("Credentials last an hour unless LAYER_TURN_TTL says otherwise")
    func credentialsLastAnHour() async throws {
        #expect(VoIPSettings().turnTTLSeconds == 3600)
        var reader = SettingsReader([:])
        #expect(VoIPSettings.read(&reader).turnTTLSeconds == 3600)
        try await VoIPHarness.run { harness in
            let body = try #require(try await (try await harness.user("alice")).get("/turn-credentials").json)
            #expect(body["ttl"] == 3600)
            let expiry = Int(body["username"]?.stringValue?.split(separator: ":").first ?? "") ?? 0
            #expect(abs(expiry - Int(Date().timeIntervalSince1970) - 3600) <= 5)
        }
    }

    @Test("Credentials go only to a live session: at once refused after logout, and after suspension")
    func credentialsNeedALiveSession() async throws {
        // Other routes may trust an introspection for a minute here; this one asks every time.
        let server = ServerSettings(introspectionCacheTTL: .seconds(60))
        try await AuthFixture.run(settings: server, withVoIP: VoIPSettings(stunPort: 0, turnSecret: "t")) { fixture in
            let harness = VoIPHarness(fixture: fixture)
            let alice = try await harness.user("alice")
            #expect(try await alice.get("/turn-credentials").status == 200)
            #expect(try await fixture.client.request(.DELETE, "/sessions/\(alice.token)").status == 204)
            let loggedOut = try await alice.get("/turn-credentials")
            #expect(loggedOut.status == 401 && loggedOut.errorID == "authentication_required", "\(loggedOut.text)")

            let bob = try await harness.user("bob")
            #expect(try await bob.get("/turn-credentials").status == 200)
            try await harness.suspend(bob)
            let suspended = try await bob.get("/turn-credentials")
            #expect(suspended.status == 403 || suspended.status == 401, "\(suspended.text)")
            #expect(suspended.json?["username"] == nil)
        }
    }

    @Test("Without a TURN secret there are no credentials to hand out: 503")
    func noSecretNoCredentials() async throws {
        try await VoIPHarness.run(settings: VoIPSettings(stunPort: 0, turnSecret: nil)) { harness in
            let response = try await (try await harness.user("alice")).get("/turn-credentials")
            #expect(response.status == 503 && response.errorID == "service_unavailable")
        }
    }
}
