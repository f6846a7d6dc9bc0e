import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// The session middleware as every service but auth uses it: introspecting over internal HTTP,
/// with a short cache.
@Suite struct SessionMiddlewareTests {
    /// A stand-in for another service: one authenticated route that says who is calling.
    struct WhoAmIService: LayerService {
        let name = "whoami"
        let migrations = MigrationRunner(schema: "whoami", migrations: [])
        let openAPI = ""
        let authenticator: SessionAuthenticator

        func addRoutes(to router: LimitedRoutes) {
            router.group("whoami").add(middleware: AcceptHeaderMiddleware()).add(middleware: authenticator)
                .get { _, context in
                    let session = try context.requireSession()
                    return try Response.json(["user_id": JSONValue.string(session.userID)])
                }
        }
    }

    /// Serves ``WhoAmIService`` next to a live auth service, introspecting against `authURL`.
    func withWhoAmI<T: Sendable>(
        auth: AuthFixture, authURL: String? = nil, cache: Duration = .milliseconds(300), timeout: Duration = .seconds(5),
        _ body: @Sendable (TestClient) async throws -> T
    ) async throws -> T {
        let client = InternalClient(
            baseURL: authURL ?? auth.server.baseURL, token: auth.internalTokens.token(of: "voip"), http: .shared,
            timeout: timeout, attempts: 2)
        let authenticator = SessionAuthenticator(
            introspector: CachingIntrospector(HTTPSessionIntrospector(client: client), ttl: cache),
            certificates: ClientCertificateReader(tlsEnabled: false, trustedProxies: []), realm: "layerline",
            limiters: RateLimiters(.standard))
        return try await LiveServer.run([ServicePlan(WhoAmIService(authenticator: authenticator))]) { server in
            try await body(TestClient(baseURL: server.baseURL, http: server.http))
        }
    }

    @Test func aSessionFromTheAuthServiceWorksInAnotherService() async throws {
        try await AuthFixture.run { auth in
            let session = try await auth.session(user: "dora")
            try await withWhoAmI(auth: auth) { whoami in
                let response = try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader(session))
                #expect(response.status == 200)
                #expect(response.json?["user_id"] == "dora")
            }
        }
    }

    @Test func anUnknownSessionIsChallengedWithANonceFromTheAuthService() async throws {
        try await AuthFixture.run { auth in
            try await withWhoAmI(auth: auth) { whoami in
                let response = try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader("no-such-token"))
                #expect(response.status == 401)
                #expect(response.errorID == "authentication_required")
                let nonce = try #require(response.json?["data"]?["nonce"]?.stringValue)
                #expect(response.headers.first(name: "WWW-Authenticate") == "Layer realm=\"layerline\", nonce=\"\(nonce)\"")
                // The nonce is a real one: a token signed for it opens a session.
                let token = try auth.app.signer.token(userID: "dora", nonce: nonce)
                #expect(try await auth.createSession(token: token).status == 201)
            }
        }
    }

    @Test func aRevokedSessionStopsWorkingWithinTheCacheTime() async throws {
        try await AuthFixture.run { auth in
            let session = try await auth.session(user: "erin")
            try await withWhoAmI(auth: auth, cache: .milliseconds(300)) { whoami in
                #expect(try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader(session)).status == 200)
                #expect(try await auth.client.request(.DELETE, "/sessions/\(session)").status == 204)
                try await Task.sleep(for: .milliseconds(400))
                let after = try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader(session))
                #expect(after.status == 401)
            }
        }
    }

    @Test func anInlineIdentityTokenOpensASessionThroughTheAuthService() async throws {
        try await AuthFixture.run { auth in
            let token = try await auth.identityToken(user: "fay")
            try await withWhoAmI(auth: auth) { whoami in
                let response = try await whoami.request(
                    .GET, "/whoami", headers: [("Authorization", "Layer identity-token=\"\(token)\"")])
                #expect(response.status == 200)
                #expect(response.headers.first(name: "X-Layer-User-ID") == "fay")
                let session = try #require(response.headers.first(name: "X-Layer-Session-Token"))
                #expect(try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader(session)).status == 200)
                // The token was spent: the same one again is refused with its reason.
                let again = try await whoami.request(
                    .GET, "/whoami", headers: [("Authorization", "Layer identity-token=\"\(token)\"")])
                #expect(again.status == 422)
                #expect(again.errorReason == "eit_nonce_not_found")
            }
        }
    }

    @Test func theInternalAPINeedsTheInternalToken() async throws {
        try await AuthFixture.run { auth in
            let anonymous = try await auth.client.request(.POST, "/internal/v1/introspect", json: ["token": "x"])
            #expect(anonymous.status == 401)
            let wrong = try await auth.client.request(
                .POST, "/internal/v1/introspect", headers: [("Authorization", "Bearer wrong")], json: ["token": "x"])
            #expect(wrong.status == 401)
            let session = try await auth.session(user: "gus")
            let answer = try await auth.client.request(
                .POST, "/internal/v1/introspect", headers: [("Authorization", "Bearer \(auth.internalTokens.token(of: "voip"))")],
                json: ["token": .string(session)])
            #expect(answer.status == 200)
            #expect(answer.json?["active"] == true)
            #expect(answer.json?["user_id"] == "gus")
            #expect(answer.json?["app_id"]?.stringValue == auth.app.uri)
            #expect(answer.json?["expires_at"]?.stringValue != nil)
        }
    }

    @Test func aServiceWhoseAuthServiceIsDownAnswers503() async throws {
        try await AuthFixture.run { auth in
            try await withWhoAmI(auth: auth, authURL: "http://127.0.0.1:9", timeout: .milliseconds(500)) { whoami in
                let response = try await whoami.request(.GET, "/whoami", headers: AuthFixture.sessionHeader("anything"))
                #expect(response.status == 503)
                #expect(response.errorID == "service_unavailable")
            }
        }
    }
}
