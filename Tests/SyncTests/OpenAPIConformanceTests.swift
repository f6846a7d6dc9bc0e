import AsyncHTTPClient
import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

/// The sync service against its own `GET /openapi.yaml` (DESIGN section 3). The service runs
/// alone, as `layer-sync` does (the auth service runs beside it, reached over HTTP), so the
/// document is the one it serves. The document lists exactly the routes its router serves, every
/// documented route answers as documented, and the real responses of realistic flows have a
/// documented status, the required headers and a body of the documented schema. The schemas
/// forbid undocumented properties, so drift fails here.
@Suite("OpenAPI conformance of the sync service")
struct OpenAPIConformanceTests {
    /// A client of the sync service that checks every response it gets against the document.
    struct Checked: CheckedAPI {
        let harness: SyncHarness
        /// The sync service alone.
        let sync: TestClient
        /// The sync service's pool, to build a second router with the same routes.
        let postgres: PostgresClient
        let document: OpenAPIDocument

        var client: TestClient { sync }

        /// `name`, signed in through the auth service, making requests to the sync service.
        func user(_ name: String, claims: [String: JSONValue] = [:]) async throws -> UserClient {
            let signedIn = try await harness.user(name, claims: claims)
            return UserClient(id: signedIn.id, token: signedIn.token, client: sync)
        }

        /// The app's backend: its client with a fresh token, that token's header, and the path
        /// every Server API route of the app starts with.
        func backend() async throws -> (server: ServerClient, bearer: [(String, String)], app: String) {
            let server = try await harness.server()
            return (server, server.auth, "/apps/\(server.appID)")
        }

        /// The path of a URL the service handed out (its host is the sync service's).
        func localPath(_ url: String) throws -> String {
            try #require(url.hasPrefix(sync.baseURL) ? String(url.dropFirst(sync.baseURL.count)) : nil, "\(url)")
        }
    }

    /// Runs the auth service (with its app and users) and, beside it, the sync service alone.
    static func withDocument(_ body: @escaping @Sendable (Checked) async throws -> Void) async throws {
        try await SyncHarness.run { harness in
            try await LiveServer.run(
                [SyncService.configured(SyncSettings(authURL: harness.client.baseURL))],
                settings: ServerSettings(internalTokens: harness.fixture.internalTokens)
            ) { server in
                let sync = TestClient(baseURL: server.baseURL, http: server.http)
                let served = try await sync.request(.GET, "/openapi.yaml", accept: nil)
                #expect(served.status == 200)
                #expect(served.headers.first(name: "Content-Type") == "application/yaml")
                let document = try OpenAPIDocument(yaml: served.text)
                try await body(
                    Checked(harness: harness, sync: sync, postgres: server.postgres, document: document))
            }
        }
    }

    // MARK: The document itself

    @Test("The document lists exactly the public routes the service serves, with the shared error shape")
    func documentListsThePublicRoutes() async throws {
        try await Self.withDocument { api in
            let document = api.document
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1.") == true)

            // The routes the service's router really has, minus the internal API, which is not public.
            let served = publicRoutes(
                of: [
                    SyncService(
                        settings: SyncSettings(authURL: "http://127.0.0.1:1"),
                        dependencies: ServiceDependencies(server: ServerSettings(), postgres: api.postgres)
                    )
                ], postgres: api.postgres)
            document.expectDescribes(exactly: served)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectUniqueOperationIDs()
            document.expectSharedResponseShapes()
        }
    }

    /// Calls every documented operation with its parameters' examples and no credentials: none is
    /// an unknown endpoint, every answer is documented, and exactly the operations that document
    /// 406 refuse a request without `Accept`.
    @Test("Every documented route is routed and answers as documented without credentials")
    func everyDocumentedRouteIsRouted() async throws {
        try await Self.withDocument { api in
            // The push routes need no Accept header; their 406 is about other headers.
            try await api.callEveryOperation(
                refusesWithoutAccept: { operation in
                    operation["responses"]?["406"] != nil && !(operation["tags"]?.arrayValue?.contains("push") ?? false)
                },
                alsoExpect: { method, path, response in
                    #expect(response.status != 405, "\(method) \(path) is not served with that method")
                })

            // What the router does not serve is not in the document either, and errs in its shape.
            try await api.expectUnserved([
                (.GET, "/conversation", 404), (.PUT, "/conversations", 405), (.GET, "/sync", 405),
                (.POST, "/internal/v1/nothing", 404),
            ])
        }
    }

    @Test("The operational routes answer as documented")
    func operationalRoutes() async throws {
        try await Self.withDocument { api in
            let root = try await api.call(.GET, "/", 200, accept: nil)
            #expect(root.headers.first(name: "Link")?.contains("/conversations>; rel=conversations") == true)
            for path in ["/health/live", "/health/ready", "/metrics", "/openapi.yaml"] {
                try await api.call(.GET, path, 200, accept: nil)
            }
            let ready = try await api.sync.request(.GET, "/health/ready", accept: nil)
            #expect(ready.json?["checks"]?["auth"] == "ok")
        }
    }

    @Test("Without the auth service, authenticated routes and readiness answer 503 as documented")
    func authServiceDown() async throws {
        try await Self.withDocument { api in
            let session = try await api.harness.user("alice")
            let server = try await api.harness.server()
            try await api.checkWithoutAuth(
                SyncService.configured(SyncSettings(authURL: "http://127.0.0.1:1")),
                internalTokens: api.harness.fixture.internalTokens,
                requests: [
                    (.GET, "/conversations", session.auth), (.GET, "/conversations", []),
                    (.GET, "/apps/\(server.appID)/users/alice/blocks", server.auth),
                ]
            ) { orphan in
                // What an orchestrator's readiness probe asks: this replica itself is fine, so it
                // stays in rotation (its routes that need auth answer 503 themselves).
                let own = try await orphan.request(.GET, "/health/ready?peers=false", accept: nil)
                api.check(own, "GET", "/health/ready", 200)
                #expect(own.json?["checks"] == ["database": "ok"])
                let wrong = try await orphan.request(.GET, "/health/ready?peers=maybe", accept: nil)
                api.check(wrong, "GET", "/health/ready", 422)
                #expect(wrong.json?["data"]?["property"] == "peers")
            }
        }
    }
}
