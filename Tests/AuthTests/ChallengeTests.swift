import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOHTTP1
import Testing

/// What an app's backend can do to its users' sessions through the Server API (DESIGN 4):
/// challenge, revoke, suspend, the session lifetime, and the inline identity-token form.
@Suite struct ChallengeTests {
    @Test func challengedSessionsAnswer401WithANonce() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let phone = try await auth.session(user: "cara")
            let laptop = try await auth.session(user: "cara")
            let bystander = try await auth.session(user: "dan")
            #expect(try await serverAPI(auth, .POST, "users/cara/challenge").status == 204)
            for token in [phone, laptop] {
                let response = try await auth.current(token)
                #expect(response.status == 401)
                #expect(response.errorID == "authentication_required")
                let nonce = try #require(response.json?["data"]?["nonce"]?.stringValue)
                #expect(response.headers.first(name: "WWW-Authenticate")?.contains("nonce=\"\(nonce)\"") == true)
            }
            #expect(try await auth.current(bystander).status == 200)
            #expect(try await serverAPI(auth, .POST, "users/nobody/challenge").status == 404)
        }
    }

    @Test func renewingAChallengedSessionKeepsItsToken() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let session = try await auth.session(user: "cara")
            #expect(try await serverAPI(auth, .POST, "users/cara/challenge").status == 204)
            let nonce = try #require(try await auth.current(session).json?["data"]?["nonce"]?.stringValue)

            let renewed = try await auth.createSession(
                token: try auth.app.signer.token(userID: "cara", nonce: nonce), headers: AuthFixture.sessionHeader(session))
            #expect(renewed.status == 201)
            #expect(renewed.json?["session_token"]?.stringValue == session)
            #expect(renewed.headers.first(name: "X-Layer-User-ID") == "cara")
            let works = try await auth.current(session)
            #expect(works.status == 200)
            #expect(works.json?["user_id"] == "cara")
        }
    }

    @Test func anotherUsersTokenDoesNotReviveAChallengedSession() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let session = try await auth.session(user: "cara")
            #expect(try await serverAPI(auth, .POST, "users/cara/challenge").status == 204)
            let nonce = try #require(try await auth.current(session).json?["data"]?["nonce"]?.stringValue)

            let other = try await auth.createSession(
                token: try auth.app.signer.token(userID: "eve", nonce: nonce), headers: AuthFixture.sessionHeader(session))
            #expect(other.status == 201)
            let otherToken = try #require(other.json?["session_token"]?.stringValue)
            #expect(otherToken != session)
            #expect(try await auth.current(otherToken).json?["user_id"] == "eve")
            #expect(try await auth.current(session).status == 401)
        }
    }

    @Test func revokingAllSessions() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let tokens = [try await auth.session(user: "rita"), try await auth.session(user: "rita")]
            let bystander = try await auth.session(user: "dan")
            #expect(try await serverAPI(auth, .DELETE, "users/rita/sessions").status == 204)
            for token in tokens {
                let response = try await auth.current(token)
                #expect(response.status == 401)
                #expect(response.json?["data"]?["nonce"]?.stringValue != nil)
            }
            #expect(try await auth.current(bystander).status == 200)
            #expect(try await auth.session(user: "rita").isEmpty == false)
        }
    }

    @Test("Many tokens introspected in one request answer in their order, each as it would alone")
    func introspectingManyTokensAtOnce() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let active = try await auth.session(user: "ivy")
            let suspended = try await auth.session(user: "sam")
            #expect(try await setSuspended(auth, "sam", true).status == 202)
            let loggedOut = try await auth.session(user: "lou")
            #expect(try await auth.client.request(.DELETE, "/sessions/\(loggedOut)").status == 204)
            let headers = [("Authorization", "Bearer \(auth.internalTokens.token(of: "sync"))")]
            let tokens = [suspended, active, "no-such-token", loggedOut, active]
            let response = try await auth.client.request(
                .POST, InternalAPI.introspectManyPath, headers: headers, json: ["tokens": .array(tokens.map(JSONValue.string))])
            #expect(response.status == 200, "\(response.text)")
            let sessions = try #require(response.json?["sessions"]?.arrayValue)
            #expect(sessions.map { $0["active"] } == [false, true, false, false, true])
            #expect(sessions[0]["reason"] == "suspended")
            #expect(sessions[1]["user_id"] == "ivy")
            #expect(sessions[2]["reason"] == "unknown")
            #expect(sessions[3]["reason"] == "unknown")
            for (token, many) in zip(tokens, sessions) {
                let one = try await auth.client.request(
                    .POST, InternalAPI.introspectPath, headers: headers, json: ["token": .string(token)])
                #expect(one.json?["active"] == many["active"])
                #expect(one.json?["user_id"] == many["user_id"])
            }

            let tooMany = try await auth.client.request(
                .POST, InternalAPI.introspectManyPath, headers: headers,
                json: ["tokens": .array(Array(repeating: .string(active), count: InternalAPI.IntrospectManyRequest.limit + 1))])
            #expect(tooMany.status == 422)
            #expect(tooMany.json?["data"]?["property"] == "tokens" || tooMany.text.contains("tokens"), "\(tooMany.text)")
            let unauthorized = try await auth.client.request(
                .POST, InternalAPI.introspectManyPath, json: ["tokens": .array([.string(active)])])
            #expect(unauthorized.status == 401 || unauthorized.status == 404, "\(unauthorized.text)")
        }
    }

    @Test func suspensionEndsSessionsAndBlocksNewOnes() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let session = try await auth.session(user: "sam")
            #expect(try await setSuspended(auth, "sam", true).status == 202)
            // Suspension ends the sessions: they answer 401 (or 403 user_suspended), never 200.
            let old = try await auth.current(session)
            #expect(old.status == 401 || (old.status == 403 && old.errorID == "user_suspended"), "\(old.text)")
            let user = try await serverAPI(auth, .GET, "users/sam")
            #expect(user.status == 200)
            #expect(user.json?["suspended"] == true)
            #expect(user.json?["identity"]?["user_id"] == "sam")

            let refused = try await auth.createSession(token: try await auth.identityToken(user: "sam"))
            #expect(refused.status == 403)
            #expect(refused.errorID == "user_suspended")
            let inline = try await auth.current(identityToken: try await auth.identityToken(user: "sam"))
            #expect(inline.status == 403)
            #expect(inline.errorID == "user_suspended")

            #expect(try await setSuspended(auth, "sam", false).status == 202)
            #expect(try await serverAPI(auth, .GET, "users/sam").json?["suspended"] == false)
            let fresh = try await auth.session(user: "sam")
            #expect(try await auth.current(fresh).status == 200)
        }
    }

    @Test func sessionTTLAppliesToNewSessions() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let patch = try await serverAPI(
                auth, .PATCH, "", json: [["operation": "set", "property": "session_ttl_in_seconds", "value": 3600]])
            #expect(patch.status == 202)
            let created = try await auth.createSession(token: try await auth.identityToken(user: "tim"))
            #expect(created.headers.first(name: "X-Layer-Session-TTL") == "3600")
            let session = try #require(created.json?["session_token"]?.stringValue)
            let expiresAt = try #require(try await auth.current(session).json?["expires_at"]?.stringValue)
            let remaining = try #require(LayerTimestamp.date(expiresAt)).timeIntervalSinceNow
            #expect((3500...3600).contains(remaining))
        }
    }

    @Test func credentialsDoNotCrossApps() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let other = try await auth.registerApp(keyIndex: 1)
            let session = try await auth.session(user: "ann")
            _ = try await auth.session(user: "bob", app: other)
            let otherToken = try await auth.serverAPIToken(app: other)
            // A session token is no Server API token, for either app.
            for app in [auth.app, other] {
                let response = try await serverAPI(auth, .GET, "users/ann", app: app, token: session)
                #expect(response.status == 401)
            }
            // Another app's Server API token acts on none of this app's users.
            for (method, path) in [
                (HTTPMethod.GET, "users/ann"), (.POST, "users/ann/challenge"), (.DELETE, "users/ann/sessions"),
            ] {
                let response = try await serverAPI(auth, method, path, token: otherToken)
                #expect(response.status == 401, "\(method) \(path)")
                #expect(response.errorID == "authentication_required")
            }
            #expect(try await auth.current(session).status == 200)
            // Nor can it reach them through its own app's path.
            #expect(try await serverAPI(auth, .GET, "users/ann", app: other, token: otherToken).status == 404)
        }
    }

    @Test func inlineIdentityTokenOpensASession() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let response = try await auth.current(identityToken: try await auth.identityToken(user: "ivy"))
            #expect(response.status == 200)
            #expect(response.json?["user_id"] == "ivy")
            #expect(response.json?["app_id"]?.stringValue == auth.app.uri)
            #expect(response.headers.first(name: "X-Layer-User-ID") == "ivy")
            #expect(response.headers.first(name: "X-Layer-Session-TTL") == "2592000")
            let session = try #require(response.headers.first(name: "X-Layer-Session-Token"))
            let again = try await auth.current(session)
            #expect(again.status == 200)
            #expect(again.json?["user_id"] == "ivy")

            let refused = try await auth.current(identityToken: try await auth.identityToken(user: "ivy", claims: ["exp": 1]))
            #expect(refused.status == 422)
            #expect(refused.errorReason == "eit_expired")
        }
    }

    @Test func operatorCanChallengeToo() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let session = try await auth.session(user: "olga")
            let path = "/admin/apps/\(auth.app.id.lowercased)/users/olga/challenge"
            #expect(try await auth.client.request(.POST, path, headers: auth.operatorHeaders).status == 204)
            #expect(try await auth.current(session).status == 401)
        }
    }

    @Test func expiredSessionAnswers401() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let session = try await auth.session(user: "old")
            try await auth.server.postgres.query(
                "UPDATE auth.sessions SET expires_at = now() - interval '1 second' WHERE app_id = \(auth.app.id)", logger: .test)
            let response = try await auth.current(session)
            #expect(response.status == 401)
            #expect(response.json?["data"]?["nonce"]?.stringValue != nil)
        }
    }

    /// User ids are app-defined strings: in Server API paths they are percent-encoded.
    @Test func userIDsWithReservedCharacters() async throws {
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            for user in ["namespace/12345", "a%41b", "über user", "q?x=1#f", "plus+sign"] {
                let session = try await auth.session(user: user)
                let encoded = try #require(user.addingPercentEncoding(withAllowedCharacters: .layerUnreserved))
                let got = try await serverAPI(auth, .GET, "users/\(encoded)")
                #expect(got.status == 200, "\(user)")
                #expect(got.json?["identity"]?["user_id"]?.stringValue == user)
                #expect(try await serverAPI(auth, .POST, "users/\(encoded)/challenge").status == 204)
                #expect(try await auth.current(session).status == 401, "\(user)")
            }
        }
    }

    // MARK: Helpers

    /// A Server API request under `/apps/<app>/`, with a fresh token of that app unless given one.
    private func serverAPI(
        _ auth: AuthFixture, _ method: HTTPMethod, _ path: String, app: AuthFixture.TestApp? = nil, token: String? = nil,
        json: JSONValue? = nil
    ) async throws -> TestResponse {
        let app = app ?? auth.app
        var bearer = token ?? ""
        if token == nil { bearer = try await auth.serverAPIToken(app: app) }
        let url = "/apps/\(app.id.lowercased)" + (path.isEmpty ? "" : "/\(path)")
        let headers = [("Authorization", "Bearer \(bearer)")]
        guard let json else { return try await auth.client.request(method, url, headers: headers) }
        return try await auth.client.request(method, url, headers: headers, json: json, contentType: MediaType.layerPatch)
    }

    private func setSuspended(_ auth: AuthFixture, _ user: String, _ suspended: Bool) async throws -> TestResponse {
        try await serverAPI(
            auth, .PATCH, "users/\(user)", json: [["operation": "set", "property": "suspended", "value": .bool(suspended)]])
    }
}
