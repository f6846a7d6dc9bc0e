import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerSync
import LayerTesting
import NIOHTTP1
import Testing

/// The auth, sync and names services in one process, as `layer dev` runs them. Its `GET /openapi.yaml` is
/// one document of every route the process serves, while each service's own document still
/// describes that service alone.
@Suite("OpenAPI conformance of a process that hosts the whole suite")
struct OpenAPISuiteConformanceTests {
    @Test("The document of a process with every service lists exactly the routes it serves")
    func oneDocumentForTheWholeProcess() async throws {
        try await AuthFixture.run(withSync: SyncSettings(), withNames: NamesSettings()) { fixture in
            let harness = SyncHarness(fixture: fixture)
            let served = try await harness.client.request(.GET, "/openapi.yaml", accept: nil)
            #expect(served.status == 200)
            #expect(served.headers.first(name: "Content-Type") == "application/yaml")
            let document = try OpenAPIDocument(yaml: served.text)
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1.") == true)
            #expect(document.root["info"]?["title"] == "Layerline suite (auth + sync + names)")

            let server = harness.fixture.server
            let services = try server.services
            #expect(services.map(\.name) == ["auth", "sync", "names"])
            let routes = publicRoutes(of: services, postgres: server.postgres)
            document.expectDescribes(exactly: routes)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectUniqueOperationIDs()

            for service in services {
                let own = try OpenAPIDocument(yaml: service.openAPI)
                let ownRoutes = publicRoutes(of: [service], postgres: server.postgres)
                #expect(
                    own.operationNames == ownRoutes,
                    "\(service.name): \(own.operationNames.symmetricDifference(ownRoutes).sorted())")
            }

            // Answers of every service, and of the routes they share, match the one document.
            let user = try await harness.user("suite-reader")
            for (path, headers, status) in [
                ("/", [(String, String)](), 200), ("/health/ready", [], 200), ("/sessions/current", user.auth, 200),
                ("/conversations", user.auth, 200), ("/conversations", [], 401),
                ("/resolve?address=email%3Anobody%40example.com", user.auth, 404),
                ("/persons/\(UUID().lowercased)", user.auth, 404),
                ("/apps/\(harness.appID)/names/settings", [], 401),
            ] {
                let response = try await harness.client.request(.GET, path, headers: headers)
                #expect(response.status == status, "GET \(path): \(response.text)")
                let problems = document.problems(response, "GET", path)
                #expect(problems.isEmpty, "GET \(path) → \(response.status): \(problems)")
            }
        }
    }
}
