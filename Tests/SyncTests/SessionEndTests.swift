import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Logging
import NIOHTTP1
import PostgresNIO
import Synchronization
import Testing

/// A session that is logged out, revoked, challenged or suspended stops working on the push
/// connections that are open with it too: at once when the auth service signals it, within the
/// introspection cache time when that signal is lost, and for every request sent over a socket.
@Suite("Sessions that end, end everywhere")
struct SessionEndTests {
    /// Settings under which nothing but the auth service's signal can end a connection within a
    /// test's bounds: introspection answers are trusted for two minutes, and connections are
    /// swept as seldom.
    static func slowChecks() -> (server: ServerSettings, sync: SyncSettings) {
        (
            ServerSettings(introspectionCacheTTL: .seconds(120)),
            SyncSettings(push: PushSettings(sessionCheck: .seconds(120)))
        )
    }

    /// How a session ends, through the public API or the Server API.
    enum Ending: String, CaseIterable, Sendable {
        case logout, revoke, challenge, suspend

        func perform(_ harness: SyncHarness, on user: UserClient) async throws {
            let server = try await harness.server()
            let response: TestResponse
            switch self {
            case .logout: response = try await harness.client.request(.DELETE, "/sessions/\(user.token)")
            case .revoke: response = try await server.delete("/users/\(user.id)/sessions")
            case .challenge: response = try await server.request(.POST, "/users/\(user.id)/challenge")
            case .suspend:
                response = try await server.patch(
                    "/users/\(user.id)", [["operation": "set", "property": "suspended", "value": true]])
            }
            #expect([202, 204].contains(response.status), "\(self): \(response.status) \(response.text)")
        }

        /// The close code of the user's sockets, and the status of their next request.
        var closeCode: Int { self == .suspend ? 4403 : 4401 }
        var status: Int { self == .suspend ? 403 : 401 }
    }

    @Test(
        "A session that is logged out, revoked, challenged or suspended closes its WebSocket and event stream at once",
        arguments: Ending.allCases)
    func endingClosesPushConnections(_ ending: Ending) async throws {
        let (server, sync) = Self.slowChecks()
        try await SyncHarness.run(settings: sync, server: server) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let socket = try await harness.socket(alice)
            let events = try await harness.events(alice)
            #expect(events.status == 200)
            let bobSocket = try await harness.socket(bob)
            // The sync service now holds Alice's session as active for two minutes.
            #expect(try await alice.get("/conversations").status == 200)

            try await ending.perform(harness, on: alice)
            let closed = try await socket.closed(timeout: .seconds(20))
            #expect(closed.code == ending.closeCode, "\(closed)")
            #expect(try await events.ended(timeout: .seconds(20)), "the event stream ends")
            let after = try await alice.get("/conversations")
            #expect(after.status == ending.status, "the session is no longer trusted from the cache: \(after.text)")
            let bobAnswer = try await bobSocket.request("Counter.read")
            #expect(bobAnswer["success"] == .bool(true), "another user's socket stays open")
            await bobSocket.close()
        }
    }

    @Test("Only the ended session's connections close when one of a user's sessions logs out")
    func logoutClosesOnlyItsSession() async throws {
        let (server, sync) = Self.slowChecks()
        try await SyncHarness.run(settings: sync, server: server) { harness in
            let phone = try await harness.user("alice")
            let laptop = try await harness.user("alice")
            let phoneSocket = try await harness.socket(phone)
            let laptopSocket = try await harness.socket(laptop)
            try await Ending.logout.perform(harness, on: phone)
            #expect(try await phoneSocket.closed(timeout: .seconds(20)).code == 4401)
            #expect(try await laptopSocket.request("Counter.read")["success"] == .bool(true))
            await laptopSocket.close()
        }
    }

    @Test("A revoked session's connections close on every sync replica")
    func endingReachesEveryReplica() async throws {
        let (server, sync) = Self.slowChecks()
        try await SyncHarness.run(settings: sync, server: server) { harness in
            let alice = try await harness.user("alice")
            try await harness.withReplica(settings: sync) { replica in
                let base = replica.replacingOccurrences(of: "http://", with: "ws://")
                let socket = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(alice.token)")
                try await socket.ready()
                let events = try await TestEventStream.connect(url: "\(replica)/events?session_token=\(alice.token)")
                #expect(events.status == 200)
                try await Ending.revoke.perform(harness, on: alice)
                #expect(try await socket.closed(timeout: .seconds(20)).code == 4401)
                #expect(try await events.ended(timeout: .seconds(20)))
            }
        }
    }

    @Test("Revoking a device certificate closes the connections of the sessions bound to it, and only those")
    func revokedCertificateClosesItsSessions() async throws {
        var (server, sync) = Self.slowChecks()
        server.trustedProxies = ["127.0.0.1"]
        try await SyncHarness.run(settings: sync, server: server) { harness in
            let auth = harness.fixture
            let issued = try await auth.certify(csr: try TestDevice().csrPEM())
            let forwarded = ["X-Client-Certificate": issued.percentEncodedPEM]
            let opened = try await auth.createSession(
                token: try await auth.identityToken(user: "alice"), headers: forwarded.map { ($0.key, $0.value) })
            let bound = try #require(opened.json?["session_token"]?.stringValue)
            let unbound = try await harness.user("alice")
            let base = harness.webSocketBase
            let certified = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(bound)", headers: forwarded)
            try await certified.ready()
            let other = try await harness.socket(unbound)

            let revoked = try await auth.client.request(
                .DELETE, "/admin/certificates/\(issued.id.uuid.lowercased)", headers: auth.operatorHeaders)
            #expect(revoked.status == 204)
            #expect(try await certified.closed(timeout: .seconds(20)).code == 4401)
            #expect(try await other.request("Counter.read")["success"] == .bool(true))
            await other.close()
        }
    }

    @Test("The notice of ended sessions takes the internal token, a user and well-formed session references")
    func noticeIsGuarded() async throws {
        try await SyncHarness.run { harness in
            let path = InternalAPI.sessionsEndedPath
            let notice: JSONValue = ["app_id": .string(harness.appID), "user_id": "alice", "reason": "revoked"]
            #expect(try await harness.client.request(.POST, path, json: notice).status == 401)
            let bearer = [("Authorization", "Bearer \(harness.fixture.internalTokens.token(of: "auth"))")]
            #expect(try await harness.client.request(.POST, path, headers: bearer, json: notice).status == 202)
            let noUser = try await harness.client.request(
                .POST, path, headers: bearer, json: ["app_id": .string(harness.appID), "user_id": "", "reason": "revoked"])
            #expect(noUser.status == 422)
            #expect(noUser.errorProperty == "user_id")
            let badSessions = try await harness.client.request(
                .POST, path, headers: bearer,
                json: ["app_id": .string(harness.appID), "user_id": "alice", "reason": "revoked", "sessions": ["a token"]])
            #expect(badSessions.status == 422)
            #expect(badSessions.errorProperty == "sessions")
        }
    }

    @Test("With auth and sync in processes of their own, auth tells sync at LAYER_SYNC_URL")
    func servicesRunApart() async throws {
        let port = try await LiveServer.freePort()
        let (server, sync) = Self.slowChecks()
        try await AuthFixture.run(settings: server, syncURL: "http://127.0.0.1:\(port)") { auth in
            var syncSettings = sync
            syncSettings.authURL = auth.server.baseURL
            try await LiveServer.run([SyncService.configured(syncSettings)], settings: auth.server.settings, port: port) {
                sync in
                let token = try await auth.session(user: "alice")
                let base = sync.baseURL.replacingOccurrences(of: "http://", with: "ws://")
                let socket = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(token)")
                try await socket.ready()
                #expect(try await auth.client.request(.DELETE, "/sessions/\(token)").status == 204)
                #expect(try await socket.closed(timeout: .seconds(20)).code == 4401)
            }
        }
    }

    /// Ends `user`'s sessions in the database behind the services' backs, as if the auth service
    /// had failed to tell the sync service.
    static func endSilently(_ user: UserClient, _ harness: SyncHarness) async throws {
        try await harness.fixture.server.postgres.query(
            "DELETE FROM auth.sessions WHERE app_id = \(harness.fixture.app.id) AND user_id = \(user.id)", logger: .test)
    }

    @Test("Without the auth service's signal, a revoked session's connections still close within the introspection cache time")
    func sweepClosesWithinTheCacheTime() async throws {
        let server = ServerSettings(introspectionCacheTTL: .milliseconds(500))
        try await SyncHarness.run(settings: SyncSettings(), server: server) { harness in
            let alice = try await harness.user("alice")
            let socket = try await harness.socket(alice)
            let events = try await harness.events(alice)
            try await Self.endSilently(alice, harness)
            // Bounds, not timings: a minute-long sweep would miss them by far.
            #expect(try await socket.closed(timeout: .seconds(20)).code == 4401)
            #expect(try await events.ended(timeout: .seconds(20)))
        }
    }

    @Test("A request sent over a WebSocket after its session ended is refused, and the socket closes")
    func requestAfterTheEndIsRefused() async throws {
        let server = ServerSettings(introspectionCacheTTL: .milliseconds(300))
        try await SyncHarness.run(settings: SyncSettings(push: PushSettings(sessionCheck: .seconds(120))), server: server) {
            harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let socket = try await harness.socket(alice)
            try await Self.endSilently(alice, harness)
            // Past the time the sync service may trust its last answer about the session.
            try await Task.sleep(for: .milliseconds(600))

            let answer = try? await socket.request(
                "Message.create", objectID: conversation,
                data: ["parts": [["mime_type": "text/plain", "body": "after the end"]]], timeout: .seconds(20))
            #expect(answer == nil, "the request was answered: \(String(describing: answer))")
            #expect(try await socket.closed(timeout: .seconds(20)).code == 4401)
            let messages = try await bob.get("/\(path(conversation))/messages")
            #expect(messages.status == 200)
            #expect(!messages.text.contains("after the end"), "the refused request wrote nothing")
        }
    }

    @Test("A session check that fails closes the connection rather than keeping it")
    func introspectionErrorCloses() async throws {
        let stand = StandInAuth()
        try await LiveServer.run([ServicePlan(stand)]) { auth in
            var sync = SyncSettings(push: PushSettings(sessionCheck: .milliseconds(300)))
            sync.authURL = auth.baseURL
            let settings = ServerSettings(
                internalTokens: auth.settings.internalTokens, introspectionCacheTTL: .milliseconds(100))
            try await LiveServer.run([SyncService.configured(sync)], settings: settings) { server in
                let base = server.baseURL.replacingOccurrences(of: "http://", with: "ws://")
                let socket = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=stand-in")
                try await socket.ready()
                let events = try await TestEventStream.connect(url: "\(server.baseURL)/events?session_token=stand-in")
                #expect(events.status == 200)
                stand.fail()
                #expect(try await socket.closed(timeout: .seconds(20)).code == 4503)
                #expect(try await events.ended(timeout: .seconds(20)))
            }
        }
    }
}

/// Stands in for the auth service: vouches for the token `stand-in` until told to fail, then
/// answers every introspection with 503.
final class StandInAuth: LayerService {
    let name = "stand-in-auth"
    let migrations = MigrationRunner(schema: "standinauth", migrations: [])
    let openAPI = ""
    let app = UUID()
    private let failing = Mutex(false)

    func fail() { failing.withLock { $0 = true } }

    func addRoutes(to router: LimitedRoutes) {
        router.post("internal/v1/introspect") { [self] request, _ -> Response in
            guard !failing.withLock({ $0 }) else { throw APIError(.serviceUnavailable, "The stand-in is down.") }
            let body = try await request.decodeJSON(InternalAPI.IntrospectRequest.self, limit: 8 * 1024)
            guard body.token == "stand-in" else { return try Response.json(InternalAPI.IntrospectResponse.inactive("unknown")) }
            return try Response.json(
                InternalAPI.IntrospectResponse(
                    active: true, userID: "alice", appID: LayerID(.apps, app).uri,
                    expiresAt: Date().addingTimeInterval(3600)))
        }
    }
}
