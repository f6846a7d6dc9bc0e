import Foundation
import LayerAuth
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import PostgresNIO
import Testing

/// One identity of a user, whoever writes it: the sync service owns the user and their identity,
/// the auth service answers it for sessions and suspension, and the app's backend sees the same
/// user through every route, whether a sign-in or the Server API made or changed them.
@Suite("One identity of a user, whoever writes it")
struct UserDirectoryTests {
    enum Creation: String, CaseIterable, Sendable {
        case signIn, serverAPI
    }

    enum Edit: String, CaseIterable, Sendable {
        case signIn, put, patch
    }

    /// The user as the Server API shows them: the user view, the identity, and the routes on the
    /// user's behalf.
    static func expectIdentity(
        _ api: ServerClient, _ user: String, displayName: String, firstName: String?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let view = try await api.get("/users/\(user)")
        #expect(view.status == 200, "\(view.text)", sourceLocation: sourceLocation)
        let identity = try await api.get("/users/\(user)/identity")
        #expect(identity.status == 200, "\(identity.text)", sourceLocation: sourceLocation)
        for identity in [view.json?["identity"], identity.json] {
            #expect(identity?["user_id"] == .string(user), sourceLocation: sourceLocation)
            #expect(identity?["id"] == .string(LayerID.identity(userID: user)), sourceLocation: sourceLocation)
            #expect(identity?["display_name"] == .string(displayName), sourceLocation: sourceLocation)
            #expect(identity?["first_name"] == firstName.map(JSONValue.string) ?? .null, sourceLocation: sourceLocation)
        }
        let conversations = try await api.get("/users/\(user)/conversations")
        #expect(conversations.status == 200, "\(conversations.text)", sourceLocation: sourceLocation)
        #expect(conversations.json?.arrayValue == [], sourceLocation: sourceLocation)
        #expect(try await api.get("/users/\(user)/blocks").status == 200, sourceLocation: sourceLocation)
    }

    static func suspend(_ api: ServerClient, _ user: String, _ suspended: Bool) async throws -> TestResponse {
        try await api.patch("/users/\(user)", [["operation": "set", "property": "suspended", "value": .bool(suspended)]])
    }

    @Test(
        "Made by a sign-in or by the Server API, changed by a later sign-in, PUT or PATCH: both services show the latest",
        arguments: Creation.allCases, Edit.allCases)
    func everyCombination(_ creation: Creation, _ edit: Edit) async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let user = "ada-\(creation.rawValue)-\(edit.rawValue)"
            switch creation {
            case .signIn:
                // Signed in, and never used the sync service.
                _ = try await harness.user(user, claims: ["display_name": "Ada", "first_name": "Ada"])
            case .serverAPI:
                let made = try await api.post("/users/\(user)/identity", ["display_name": "Ada", "first_name": "Ada"])
                #expect(made.status == 201)
            }
            try await Self.expectIdentity(api, user, displayName: "Ada", firstName: "Ada")

            // A change shows at once.
            switch edit {
            case .signIn:
                // A claim the token leaves out keeps what is stored.
                _ = try await harness.user(user, claims: ["display_name": "Ada L."])
            case .put:
                #expect(
                    try await api.put("/users/\(user)/identity", ["display_name": "Ada L.", "first_name": "Ada"]).status == 204)
            case .patch:
                let patched = try await api.patch(
                    "/users/\(user)/identity", [["operation": "set", "property": "display_name", "value": "Ada L."]])
                #expect(patched.status == 204)
            }
            try await Self.expectIdentity(api, user, displayName: "Ada L.", firstName: "Ada")

            // What the auth service keeps works for the user, whoever made them.
            #expect(try await Self.suspend(api, user, true).status == 202)
            #expect(try await api.get("/users/\(user)").json?["suspended"] == true)
            let refused = try await harness.fixture.createSession(token: try await harness.fixture.identityToken(user: user))
            #expect(refused.status == 403)
            #expect(refused.errorID == "user_suspended")
            #expect(try await api.delete("/users/\(user)/sessions").status == 204)
            #expect(try await api.request(.POST, "/users/\(user)/challenge").status == 204)
            #expect(try await Self.suspend(api, user, false).status == 202)
            let reinstated = try await api.get("/users/\(user)")
            #expect(reinstated.json?["suspended"] == false)
            #expect(reinstated.json?["identity"]?["display_name"] == "Ada L.")
            #expect(try await harness.user(user).token.isEmpty == false)
        }
    }

    @Test("A later sign-in changes only the fields its token carries; what the app wrote otherwise stays")
    func claimsAndServerEdits() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            _ = try await harness.user("bea", claims: ["display_name": "Bea", "avatar_url": "https://a.example/1.png"])
            let patched = try await api.patch(
                "/users/bea/identity",
                [
                    ["operation": "set", "property": "last_name", "value": "Server"],
                    ["operation": "set", "property": "avatar_url", "value": "https://a.example/2.png"],
                    ["operation": "set", "property": "metadata.team", "value": "blue"],
                ])
            #expect(patched.status == 204)
            _ = try await harness.user("bea", claims: ["display_name": "Beatrice"])
            let identity = try await api.get("/users/bea").json?["identity"]
            #expect(identity?["display_name"] == "Beatrice")
            #expect(identity?["last_name"] == "Server")
            #expect(identity?["avatar_url"] == "https://a.example/2.png")
            #expect(identity?["metadata"] == ["team": "blue"])
            #expect(try await api.get("/users/bea/identity").json?["display_name"] == "Beatrice")

            // Using the sync service with the session does not bring the old claims back.
            let bea = try await harness.user("bea", claims: ["avatar_url": "https://a.example/3.png"])
            #expect(
                try await api.patch("/users/bea/identity", [["operation": "set", "property": "display_name", "value": "B."]])
                    .status == 204)
            #expect(try await bea.get("/conversations").status == 200)
            #expect(try await api.get("/users/bea").json?["identity"]?["display_name"] == "B.")
            #expect(try await api.get("/users/bea/identity").json?["avatar_url"] == "https://a.example/3.png")
        }
    }

    @Test("A deleted identity is gone from both services at once; a session's next use makes a new one")
    func deletion() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            #expect(try await api.post("/users/cid/identity", ["display_name": "Cid"]).status == 201)
            #expect(try await api.get("/users/cid").status == 200)
            #expect(try await api.delete("/users/cid/identity").status == 204)
            for response in [
                try await api.get("/users/cid"), try await Self.suspend(api, "cid", true),
                try await api.delete("/users/cid/sessions"), try await api.get("/users/cid/conversations"),
            ] {
                #expect(response.status == 404, "\(response.text)")
            }

            // A user with sessions stays a user, shown with their sign-in's claims.
            let dot = try await harness.user("dot", claims: ["display_name": "Dot"])
            #expect(try await api.delete("/users/dot/identity").status == 204)
            let view = try await api.get("/users/dot")
            #expect(view.status == 200)
            #expect(view.json?["identity"]?["display_name"] == "Dot")
            #expect(try await api.get("/users/dot/identity").status == 404)
            #expect(try await dot.get("/conversations").status == 200)
            #expect(try await api.get("/users/dot/identity").json?["display_name"] == "Dot")
        }
    }

    @Test("A sign-in while the sync service is down opens a session, and reaches the sync service once it is back")
    func reportsWhenSyncReturns() async throws {
        let port = try await LiveServer.freePort()
        let quickReports: @Sendable (inout AuthSettings) -> Void = { $0.claimsReportInterval = .milliseconds(100) }
        // A database of its own: another test's reporter would take this one's claims.
        let database = ServerSettings(database: try await TestDatabase.isolated())
        try await AuthFixture.run(settings: database, syncURL: "http://127.0.0.1:\(port)", configure: quickReports) { auth in
            let session = try await auth.session(user: "fay", claims: ["display_name": "Fay", "last_name": "Late"])
            #expect(!session.isEmpty)
            let unreported: PostgresQuery = "SELECT count(*) FROM auth.unreported_claims WHERE app_id = \(auth.app.id)"
            #expect(try await count(auth, unreported) == 1)
            let token = try await auth.serverAPIToken()

            var syncSettings = SyncSettings()
            syncSettings.authURL = auth.server.baseURL
            try await LiveServer.run([SyncService.configured(syncSettings)], settings: auth.server.settings, port: port) { sync in
                let viaSync = ServerClient(appID: auth.app.id.lowercased, token: token, client: TestClient(baseURL: sync.baseURL))
                #expect(
                    try await eventually(timeout: .seconds(30)) { try await viaSync.get("/users/fay/identity").status == 200 })
                let identity = try await viaSync.get("/users/fay/identity").json
                #expect(identity?["display_name"] == "Fay")
                #expect(identity?["last_name"] == "Late")
                #expect(try await viaSync.get("/users/fay/conversations").json?.arrayValue == [])
                #expect(try await eventually { try await count(auth, unreported) == 0 })

                // With the services apart, the user view shows the identity and asks auth for the rest.
                #expect(try await viaSync.get("/users/fay").json?["identity"]?["display_name"] == "Fay")
                let patched = try await viaSync.patch(
                    "/users/fay/identity", [["operation": "set", "property": "display_name", "value": "Fay L."]])
                #expect(patched.status == 204)
                #expect(try await viaSync.get("/users/fay").json?["identity"]?["display_name"] == "Fay L.")
                #expect(try await viaSync.request(.POST, "/users/fay/challenge").status == 204)
                // And a sign-in now reaches the sync service at once.
                _ = try await auth.session(user: "gus", claims: ["display_name": "Gus"])
                #expect(try await viaSync.get("/users/gus/identity").json?["display_name"] == "Gus")
                #expect(try await count(auth, unreported) == 0)
                #expect(try await viaSync.get("/users/gus").json?["identity"]?["display_name"] == "Gus")
            }
        }
    }

    @Test("Claims of a sign-in reported late never undo what the app wrote after that sign-in")
    func lateClaimsKeepNewerEdits() async throws {
        let port = try await LiveServer.freePort()
        let quickReports: @Sendable (inout AuthSettings) -> Void = { $0.claimsReportInterval = .milliseconds(100) }
        // A database of its own: another test's reporter would take this one's claims.
        let database = ServerSettings(database: try await TestDatabase.isolated())
        try await AuthFixture.run(settings: database, syncURL: "http://127.0.0.1:\(port)", configure: quickReports) { auth in
            // Signed in while the sync service is down; the report waits (here: until released below).
            _ = try await auth.session(user: "hal", claims: ["display_name": "Hal (token)", "last_name": "Token"])
            let app = auth.app.id
            @Sendable func holdReports(_ held: Bool) async throws {
                let due = held ? "infinity" : "-infinity"
                try await auth.server.postgres.query(
                    "UPDATE auth.unreported_claims SET next_attempt_at = \(due)::timestamptz WHERE app_id = \(app)",
                    logger: .test)
            }
            // A report already under way fails at once (nothing listens yet), and puts off its row
            // again: held once nothing overrides the hold any more.
            let held: PostgresQuery =
                "SELECT count(*) FROM auth.unreported_claims WHERE app_id = \(app) AND next_attempt_at = 'infinity'"
            #expect(
                try await eventually {
                    try await holdReports(true)
                    try await Task.sleep(for: .milliseconds(300))
                    return try await count(auth, held) == 1
                })
            let token = try await auth.serverAPIToken()

            var syncSettings = SyncSettings()
            syncSettings.authURL = auth.server.baseURL
            try await LiveServer.run([SyncService.configured(syncSettings)], settings: auth.server.settings, port: port) { sync in
                let viaSync = ServerClient(appID: app.lowercased, token: token, client: TestClient(baseURL: sync.baseURL))
                #expect(try await viaSync.post("/users/hal/identity", ["display_name": "Hal (app)"]).status == 201)
                try await holdReports(false)
                let unreported: PostgresQuery = "SELECT count(*) FROM auth.unreported_claims WHERE app_id = \(app)"
                #expect(try await eventually { try await count(auth, unreported) == 0 })
                let identity = try await viaSync.get("/users/hal/identity").json
                #expect(identity?["display_name"] == "Hal (app)")
                #expect(identity?["last_name"] == .null)

                // A sign-in after the edit changes what its token carries.
                _ = try await auth.session(user: "hal", claims: ["last_name": "Later"])
                let later = try await viaSync.get("/users/hal/identity").json
                #expect(later?["display_name"] == "Hal (app)")
                #expect(later?["last_name"] == "Later")
            }
        }
    }

    func count(_ auth: AuthFixture, _ query: PostgresQuery) async throws -> Int64 {
        for try await value in try await auth.server.postgres.query(query, logger: .test).decode(Int64.self) { return value }
        return 0
    }
}

/// Whether `condition` holds within `timeout`, asked every 50 ms.
func eventually(
    timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
