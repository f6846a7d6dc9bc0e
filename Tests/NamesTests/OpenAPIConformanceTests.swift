import AsyncHTTPClient
import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerTesting
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

/// The name resolution service against its own `GET /openapi.yaml` (DESIGN section 3). The
/// service runs alone, as `layer-names` does (the auth service runs beside it, reached over HTTP),
/// so the document is the one it serves. The document lists exactly the routes its router serves,
/// every documented route answers as documented, and the real responses of every operation, for
/// users and for the app's backend, have a documented status, the required headers and a body of
/// the documented schema. The record matching is not what is checked here: the tests look at the
/// shapes of matches, never at their probabilities.
@Suite("OpenAPI conformance of the names service")
struct OpenAPIConformanceTests {
    /// A client of the names service that checks every response it gets against the document.
    struct Checked: CheckedAPI {
        let harness: NamesHarness
        /// The names service alone.
        let names: TestClient
        /// The names service's pool, to build a second router with the same routes.
        let postgres: PostgresClient
        let document: OpenAPIDocument

        var client: TestClient { names }

        /// `name`, signed in through the auth service; requests go to the names service.
        func user(_ name: String) async throws -> NamesClient {
            let signedIn = try await harness.user(name)
            return NamesClient(prefix: "", headers: signedIn.headers, client: names)
        }

        /// The app's backend with a fresh Server API token; its paths start with `prefix`.
        func backend() async throws -> NamesClient {
            let server = try await harness.server()
            return NamesClient(prefix: server.prefix, headers: server.headers, client: names)
        }
    }

    /// Runs the auth service (with its app and users) and, beside it, the names service alone.
    static func withDocument(_ body: @escaping @Sendable (Checked) async throws -> Void) async throws {
        try await NamesHarness.run { harness in
            try await LiveServer.run(
                [NamesService.configured(NamesSettings(authURL: harness.client.baseURL, resolveRate: 1000, writeRate: 1000))],
                settings: ServerSettings(internalToken: harness.fixture.internalToken)
            ) { server in
                let names = TestClient(baseURL: server.baseURL, http: server.http)
                let served = try await names.request(.GET, "/openapi.yaml", accept: nil)
                #expect(served.status == 200)
                #expect(served.headers.first(name: "Content-Type") == "application/yaml")
                let document = try OpenAPIDocument(yaml: served.text)
                try await body(Checked(harness: harness, names: names, postgres: server.postgres, document: document))
            }
        }
    }

    // MARK: The document itself

    @Test("The document lists exactly the public routes the service serves, with the shared error shape")
    func documentListsThePublicRoutes() async throws {
        try await Self.withDocument { api in
            let document = api.document
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1.") == true)
            #expect(document.root["info"]?["title"] == "Layerline name resolution service")

            // The routes the service's router really has, minus the internal API, which is not public.
            let served = publicRoutes(
                of: [
                    NamesService(
                        settings: NamesSettings(authURL: "http://127.0.0.1:1"),
                        dependencies: ServiceDependencies(server: ServerSettings(internalToken: "unused"), postgres: api.postgres)
                    )
                ], postgres: api.postgres)
            #expect(served.contains("get /apps/{app}/persons/duplicates") && served.contains("post /route"))
            document.expectDescribes(exactly: served)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectUniqueOperationIDs()
            document.expectSharedResponseShapes()
            #expect(!document.operationNames.contains { $0.contains("/internal/") })
            try document.expectOwnComponentsNamed(prefix: "Names")
        }
    }

    /// Calls every documented operation with its parameters' examples and no credentials: none is
    /// an unknown endpoint, every answer is documented, and exactly the operations that document
    /// 406 refuse a request without `Accept`.
    @Test("Every documented route is routed and answers as documented without credentials")
    func everyDocumentedRouteIsRouted() async throws {
        try await Self.withDocument { api in
            try await api.callEveryOperation(alsoExpect: { method, path, response in
                #expect(response.status != 405, "\(method) \(path) is not served with that method")
            })

            // What the router does not serve is not in the document either, and errs in its shape.
            let app = "/apps/\(api.harness.appID)"
            let person = UUID().lowercased
            try await api.expectUnserved([
                (.GET, "/person", 404), (.PUT, "/persons", 405), (.DELETE, "/persons/\(person)", 405),
                (.POST, "/resolve", 405), (.GET, "/route", 405),
                // What only a person's owner does has no Server API form.
                (.POST, "\(app)/persons/\(person)/claim", 404), (.POST, "/internal/v1/nothing", 404),
            ])
        }
    }

    @Test("The operational routes answer as documented")
    func operationalRoutes() async throws {
        try await Self.withDocument { api in
            let root = try await api.call(.GET, "/", 200, accept: nil)
            let links = root.headers.first(name: "Link") ?? ""
            #expect(links.contains("/persons>; rel=persons") && links.contains("/resolve>; rel=resolve"), "\(links)")
            for path in ["/health/live", "/health/ready", "/metrics", "/openapi.yaml"] {
                try await api.call(.GET, path, 200, accept: nil)
            }
            let ready = try await api.names.request(.GET, "/health/ready", accept: nil)
            #expect(ready.json?["checks"]?["auth"] == "ok")
        }
    }

    // MARK: Without the auth service

    @Test("Without the auth service, authenticated routes and readiness answer 503 as documented")
    func authServiceDown() async throws {
        try await HTTPClient.withImpatientClient { try await Self.orphanedNamesService(http: $0) }
    }

    private static func orphanedNamesService(http impatient: HTTPClient) async throws {
        try await Self.withDocument { api in
            // A second names service whose auth service is nowhere (nothing listens on port 1).
            try await LiveServer.run(
                [NamesService.configured(NamesSettings(authURL: "http://127.0.0.1:1"))],
                settings: ServerSettings(internalToken: api.harness.fixture.internalToken), http: impatient
            ) { server in
                let orphan = TestClient(baseURL: server.baseURL, http: server.http)
                let alice = try await api.harness.user("alice")
                let backend = try await api.harness.server()
                for (method, path, headers) in [
                    (HTTPMethod.GET, "/resolve?address=system%3Aalice", alice.headers), (.GET, "/resolve", []),
                    (.GET, "\(backend.prefix)/names/settings", backend.headers),
                ] {
                    let response = try await orphan.request(method, path, headers: headers)
                    api.check(response, method.rawValue, path, 503)
                    #expect(response.errorID == "service_unavailable")
                }
                let ready = try await orphan.request(.GET, "/health/ready", accept: nil)
                api.check(ready, "GET", "/health/ready", 503)
                #expect(ready.json?["checks"]?["auth"] == "unavailable")
            }
        }
    }
}

extension NamesClient: Credentials {
    var auth: [(String, String)] { headers }
}
