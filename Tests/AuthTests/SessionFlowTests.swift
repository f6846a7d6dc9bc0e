import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// The whole protocol of DESIGN section 4 as a client and an app's backend go through it.
@Suite struct SessionFlowTests {
    @Test func nonceIsRandomURLSafeAndLong() async throws {
        try await AuthFixture.run { auth in
            let first = try await auth.nonce()
            let second = try await auth.nonce()
            #expect(first != second)
            #expect(first.count >= 22)  // at least 128 bits in base64url
            #expect(first.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        }
    }

    @Test func sessionOpensAndAuthenticatesAndLogsOut() async throws {
        try await AuthFixture.run { auth in
            let token = try await auth.identityToken(user: "alice", claims: ["display_name": "Alice A."])
            let created = try await auth.createSession(token: token)
            #expect(created.status == 201)
            let sessionToken = try #require(created.json?["session_token"]?.stringValue)
            #expect(created.headers.first(name: "X-Layer-User-ID") == "alice")
            #expect(created.headers.first(name: "X-Layer-Session-Token") == sessionToken)
            #expect(created.headers.first(name: "X-Layer-Session-TTL") == "2592000")
            #expect(created.headers.first(name: "Link")?.contains("rel=conversations") == true)

            let current = try await auth.client.request(
                .GET, "/sessions/current", headers: AuthFixture.sessionHeader(sessionToken))
            #expect(current.status == 200)
            #expect(current.json?["user_id"] == "alice")
            #expect(current.json?["app_id"]?.stringValue == auth.app.uri)
            #expect(current.json?["identity"]?["display_name"] == "Alice A.")

            let logout = try await auth.client.request(.DELETE, "/sessions/\(sessionToken)")
            #expect(logout.status == 204)
            let after = try await auth.client.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(sessionToken))
            #expect(after.status == 401)
            #expect(after.errorID == "authentication_required")
        }
    }

    @Test func nonceCanBeSpentOnlyOnce() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let first = try auth.app.signer.token(userID: "bob", nonce: nonce)
            let second = try auth.app.signer.token(userID: "bob", nonce: nonce, extraClaims: ["display_name": "Bob"])
            #expect(try await auth.createSession(token: first).status == 201)
            let replay = try await auth.createSession(token: second)
            #expect(replay.status == 422)
            #expect(replay.errorID == "invalid_property")
            #expect(replay.errorProperty == "identity_token")
            #expect(replay.errorReason == "eit_nonce_not_found")
        }
    }

    @Test func manySessionsPerUser() async throws {
        try await AuthFixture.run { auth in
            let phone = try await auth.session(user: "carol")
            let laptop = try await auth.session(user: "carol")
            #expect(phone != laptop)
            for token in [phone, laptop] {
                let current = try await auth.client.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(token))
                #expect(current.json?["user_id"] == "carol")
            }
        }
    }
}
