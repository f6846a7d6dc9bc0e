import Foundation
import LayerModels
import LayerServer
import LayerTesting
import LayerVoIP
import NIOHTTP1
import PostgresNIO
import Testing

/// The VoIP service against its own `GET /openapi.yaml`. It runs alone, as `layer-voip` does,
/// reaching the auth and sync services of a harness over HTTP: the document lists exactly the
/// routes its router serves, every documented route answers as documented, and real responses of
/// every operation have a documented status, the required headers and a body of the documented
/// schema.
@Suite("OpenAPI conformance of the VoIP service")
struct OpenAPIConformanceTests {
    struct Checked: CheckedAPI {
        let harness: VoIPHarness
        /// The VoIP service alone.
        let voip: TestClient
        let postgres: PostgresClient
        let document: OpenAPIDocument
        var client: TestClient { voip }
    }

    static func withDocument(_ body: @escaping @Sendable (Checked) async throws -> Void) async throws {
        try await VoIPHarness.run { harness in
            let base = harness.client.baseURL
            let settings = VoIPSettings(authURL: base, syncURL: base, stunPort: 0, turnSecret: "conformance")
            try await LiveServer.run(
                [VoIPService.configured(settings)], settings: ServerSettings(internalTokens: harness.fixture.internalTokens)
            ) { server in
                let voip = TestClient(baseURL: server.baseURL, http: server.http)
                let served = try await voip.request(.GET, "/openapi.yaml", accept: nil)
                #expect(served.status == 200)
                let document = try OpenAPIDocument(yaml: served.text)
                try await body(Checked(harness: harness, voip: voip, postgres: server.postgres, document: document))
            }
        }
    }

    @Test("The document lists exactly the public routes the service serves, with the shared error shape")
    func documentListsThePublicRoutes() async throws {
        try await Self.withDocument { api in
            let document = api.document
            #expect(document.root["info"]?["title"] == "Layerline VoIP signalling service")
            let served = publicRoutes(
                of: [
                    VoIPService(
                        settings: VoIPSettings(stunPort: 0),
                        dependencies: ServiceDependencies(server: ServerSettings(), postgres: api.postgres)
                    )
                ], postgres: api.postgres)
            #expect(served.contains("post /calls/{call}/answer") && served.contains("get /turn-credentials"))
            document.expectDescribes(exactly: served)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectUniqueOperationIDs()
            document.expectSharedResponseShapes()
            try document.expectOwnComponentsNamed(prefix: "VoIP")
        }
    }

    @Test("Every documented route is routed and answers as documented without credentials")
    func everyDocumentedRouteIsRouted() async throws {
        try await Self.withDocument { api in
            try await api.callEveryOperation(alsoExpect: { method, path, response in
                #expect(response.status != 405, "\(method) \(path) is not served with that method")
            })
            let call = UUID().lowercased
            try await api.expectUnserved([
                (.GET, "/call", 404), (.PUT, "/calls", 405), (.DELETE, "/calls/\(call)", 405),
                (.GET, "/calls/\(call)/answer", 405), (.POST, "/turn-credentials", 405),
            ])
        }
    }

    @Test("Placing, answering, ending and listing calls, and TURN credentials, answer as documented")
    func callsAnswerAsDocumented() async throws {
        try await Self.withDocument { api in
            let alice = try await api.harness.user("alice")
            let bob = try await api.harness.user("bob")
            let place: JSONValue = [
                "callee": .string(bob.identity), "caller_token": "alice-token", "candidates": [hostCandidate],
                "media": "video",
            ]
            let placed = try await api.call(.POST, "/calls", 201, as: alice, json: place)
            let id = try #require(placed.json?["id"]?.stringValue)
            let path = alice.path(id)
            try await api.call(.GET, path, 200, as: alice)
            try await api.call(.GET, path, 404, as: try await api.harness.user("carol"))
            let answer: JSONValue = ["device_id": "phone", "callee_token": "bob-token", "candidates": [relayCandidate]]
            try await api.call(.POST, "\(path)/answer", 403, as: alice, json: answer)
            try await api.call(.POST, "\(path)/answer", 200, as: bob, json: answer)
            try await api.call(.POST, "\(path)/answer", 409, as: bob, json: answer)
            try await api.call(.POST, "\(path)/hangup", 200, as: bob)

            let second = try #require(try await api.call(.POST, "/calls", 201, as: alice, json: place).json?["id"]?.stringValue)
            try await api.call(.POST, "\(alice.path(second))/cancel", 403, as: bob)
            try await api.call(.POST, "\(alice.path(second))/reject", 200, as: bob, json: [:])
            let third = try #require(try await api.call(.POST, "/calls", 201, as: alice, json: place).json?["id"]?.stringValue)
            try await api.call(.POST, "\(alice.path(third))/cancel", 200, as: alice)
            try await api.call(
                .POST, "\(alice.path(third))/reject", 422, as: bob, json: ["why": "busy"])

            let list = try await api.call(.GET, "/calls?page_size=2", 200, as: bob)
            #expect(list.json?.arrayValue?.count == 2 && list.headers.first(name: "Layer-Count") == "3")
            try await api.call(.GET, "/calls?page_size=500", 422, as: bob)
            try await api.call(.POST, "/calls", 422, as: alice, json: ["callee": .string(alice.identity), "caller_token": "t"])
            try await api.call(.GET, "/turn-credentials", 200, as: alice)

            // Blocks, the allowance of calls (10 a minute: every attempt counts) and suspension.
            try await bob.block(alice)
            try await api.call(.POST, "/calls", 422, as: alice, json: place)
            for _ in 0..<10 { _ = try await api.voip.request(.POST, "/calls", headers: alice.headers, json: place) }
            try await api.call(.POST, "/calls", 429, as: alice, json: place)
            let carol = try await api.harness.user("carol")
            try await api.harness.suspend(carol)
            try await api.call(.GET, "/turn-credentials", 403, as: carol)
        }
    }
}

extension Party: Credentials {
    var auth: [(String, String)] { headers }
}
