import Foundation
import LayerAuth
import LayerNames
import LayerServer
import LayerTesting
import Testing

/// The service executables and `layer migrate`, as an operator starts them.
@Suite struct ExecutableTests {
    @Test func layerAuthRefusesToStartAndListsEverythingMissing() async throws {
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer-auth"), [],
            environment: [
                "LAYER_DATABASE_URL": "", "LAYER_OPERATOR_TOKEN": "", "LAYER_CA_KEY_SECRET": "",
                "LAYER_PORT": "not-a-port",
            ])
        let status = try await child.wait(timeout: .seconds(30))
        #expect(status == 78)
        for missing in [
            "LAYER_DATABASE_URL", "LAYER_OPERATOR_TOKEN", "LAYER_CA_KEY_SECRET", "LAYER_PORT",
            // Its own internal token and those of the services that call it.
            "LAYER_INTERNAL_TOKEN_AUTH", "LAYER_INTERNAL_TOKEN_SYNC", "LAYER_INTERNAL_TOKEN_NAMES", "LAYER_INTERNAL_TOKEN_VOIP",
        ] {
            #expect(child.output.contains(missing), "\(missing) is not named: \(child.output)")
        }
    }

    @Test func layerAuthServesOnItsOwn() async throws {
        let database = try await TestDatabase.settings()
        let port = Int.random(in: 20_000..<60_000)
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer-auth"), [],
            environment: [
                "LAYER_DATABASE_URL": database.url, "LAYER_OPERATOR_TOKEN": "operator",
                "LAYER_CA_KEY_SECRET": "test-ca-secret", "LAYER_PORT": String(port), "LAYER_HOST": "127.0.0.1",
            ].merging(InternalTokens.random().environment) { $1 })
        let client = TestClient(baseURL: "http://127.0.0.1:\(port)")
        var ready: TestResponse?
        for _ in 0..<100 where ready?.status != 200 {
            ready = try? await client.request(.GET, "/health/ready")
            if ready?.status != 200 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(ready?.status == 200, "\(child.output)")
        let created = try await client.request(
            .POST, "/admin/apps", headers: [("Authorization", "Bearer operator")], json: ["name": "standalone"])
        #expect(created.status == 201)
        child.signal(SIGTERM)
        #expect(try await child.wait(timeout: .seconds(30)) == 0)
    }

    @Test func migrateReportsEachService() async throws {
        let database = try await TestDatabase.settings()
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer"), ["migrate"], environment: ["LAYER_DATABASE_URL": database.url])
        #expect(try await child.wait(timeout: .seconds(60)) == 0, "\(child.output)")
        #expect(child.output.contains("auth: "))
    }

    @Test func openAPIPrintsAndWritesTheDocumentsWithoutADatabase() async throws {
        let layer = try ChildProcess.builtProduct("layer")
        func run(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
            let child = try ChildProcess(layer, arguments, environment: ["LAYER_DATABASE_URL": ""])
            return (try await child.wait(timeout: .seconds(30)), child.output)
        }
        let suite = try await run(["openapi"])
        #expect(suite.status == 0, "\(suite.output)")
        #expect(try OpenAPIDocument(yaml: suite.output).root["info"]?["title"] == "Layerline suite (auth + sync + names + voip)")
        let auth = try await run(["openapi", "--service", "auth"])
        #expect(auth.status == 0 && auth.output == AuthService.openAPI)
        let names = try await run(["openapi", "--service", "names"])
        #expect(names.status == 0 && names.output == NamesService.openAPI)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let written = try await run(["openapi", "--out", directory.path])
        #expect(written.status == 0, "\(written.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(Set(files) == ["auth.yaml", "sync.yaml", "names.yaml", "voip.yaml", "suite.yaml"])
        #expect(try String(contentsOf: directory.appendingPathComponent("suite.yaml"), encoding: .utf8) == suite.output)
        #expect(try String(contentsOf: directory.appendingPathComponent("auth.yaml"), encoding: .utf8) == auth.output)
        #expect(try String(contentsOf: directory.appendingPathComponent("names.yaml"), encoding: .utf8) == names.output)

        let unknown = try await run(["openapi", "--service", "billing"])
        #expect(unknown.status != 0 && unknown.output.contains("auth, sync, names"), "\(unknown.output)")
    }
}
