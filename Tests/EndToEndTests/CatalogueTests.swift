import Foundation
import LayerServer
import LayerSuite
import LayerTesting
import Testing

/// The catalogue composes the suite: whatever it lists is migrated by `layer migrate`, runs alone
/// as `layer-<name>` with the same start-up checks, and serves beside the others in one process.
@Suite struct CatalogueTests {
    @Test func migrateAppliesEveryServiceOfTheCatalogue() async throws {
        let database = try await TestDatabase.settings()
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer"), ["migrate"], environment: ["LAYER_DATABASE_URL": database.url])
        #expect(try await child.wait(timeout: .seconds(60)) == 0, "\(child.output)")
        for service in Suite.services {
            #expect(child.output.contains("\(service.name): "), "\(service.name) is not reported: \(child.output)")
        }
    }

    @Test func everyServiceExecutableRefusesToStartWithoutItsSettings() async throws {
        for service in Suite.services {
            let child = try ChildProcess(
                try ChildProcess.builtProduct(service.executable), [],
                environment: ["LAYER_DATABASE_URL": "", "LAYER_PORT": "70000"])
            #expect(try await child.wait(timeout: .seconds(30)) == 78, "\(service.executable): \(child.output)")
            // Its own internal token, and those of the services that call it.
            let tokens = ([service.name] + service.internalCallers).map(InternalTokens.setting(of:))
            for missing in ["LAYER_DATABASE_URL", "LAYER_PORT"] + tokens {
                #expect(child.output.contains(missing), "\(service.executable) does not name \(missing): \(child.output)")
            }
        }
    }

    @Test func theWholeCatalogueServesOnOneListenerFromItsEnvironment() async throws {
        var reader = SettingsReader([
            "LAYER_OPERATOR_TOKEN": "operator", "LAYER_CA_KEY_SECRET": "test-ca-secret", "LAYER_CONTENT_LINK_SECRET": "links",
            // Ignored: a service hosted in the same process is called on that process's listener.
            "LAYER_AUTH_URL": "http://127.0.0.1:1",
        ])
        let plans = Suite.configured(from: &reader)
        try reader.validate("catalogue test")
        #expect(plans.map(\.name) == Suite.services.map { $0.name })
        try await LiveServer.run(plans) { server in
            let client = TestClient(baseURL: server.baseURL)
            let ready = try await client.request(.GET, "/health/ready", accept: nil)
            #expect(ready.status == 200, "\(ready.text)")
            let links = try await client.request(.GET, "/", accept: nil).headers.first(name: "Link") ?? ""
            for service in try server.services {
                for link in service.links {
                    #expect(links.contains("\(link.path)>; rel=\(link.rel)"), "\(service.name): \(links)")
                }
            }
            // A session from the auth service works on the sync service's routes of the same process.
            let app = try await AuthFixture.registerApp(client: client, operatorToken: "operator", keyIndex: 0)
            let nonce = try #require(try await client.request(.POST, "/nonces").json?["nonce"]?.stringValue)
            let session = try await client.request(
                .POST, "/sessions",
                json: [
                    "identity_token": .string(try app.signer.token(userID: "catalogue", nonce: nonce)),
                    "app_id": .string(app.uri),
                ])
            let token = try #require(session.json?["session_token"]?.stringValue, "\(session.text)")
            let conversations = try await client.request(.GET, "/conversations", headers: AuthFixture.sessionHeader(token))
            #expect(conversations.status == 200, "\(conversations.text)")
        }
    }
}
