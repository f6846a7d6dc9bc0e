import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import Testing

/// The user resource of the Server API, served by the sync service alone and asking the auth
/// service (over HTTP, as in a deployment of separate services) about sessions and suspension.
extension OpenAPIConformanceTests {
    @Test("The Server API's user, suspension, sessions and blocks answer as documented")
    func serverUsers() async throws {
        try await Self.withDocument { api in
            let auth = api.harness.fixture
            let (_, bearer, app) = try await api.backend()
            _ = try await api.user("quinn")

            let user = try await api.call(.GET, "\(app)/users/quinn", 200, headers: bearer)
            #expect(user.json?["identity"]?["id"] == "layer:///identities/quinn")
            #expect(user.json?["suspended"] == false)
            try await api.call(.GET, "\(app)/users/nobody", 404, headers: bearer)
            try await api.call(.GET, "\(app)/users/quinn", 401)

            let suspend: JSONValue = [["operation": "set", "property": "suspended", "value": true]]
            try await api.patch("\(app)/users/quinn", 202, headers: bearer, json: suspend)
            let refused = try await auth.createSession(token: try await auth.identityToken(user: "quinn"))
            #expect(refused.status == 403)
            #expect(refused.errorID == "user_suspended")
            try await api.patch(
                "\(app)/users/quinn", 422, headers: bearer, json: [["operation": "set", "property": "suspended", "value": "yes"]])
            try await api.patch(
                "\(app)/users/quinn", 202, headers: bearer, json: [["operation": "set", "property": "suspended", "value": false]])

            try await api.call(.POST, "\(app)/users/quinn/challenge", 204, headers: bearer)
            try await api.call(.POST, "\(app)/users/nobody/challenge", 404, headers: bearer)
            try await api.call(.DELETE, "\(app)/users/quinn/sessions", 204, headers: bearer)
            try await api.call(.DELETE, "\(app)/users/nobody/sessions", 404, headers: bearer)
            try await api.call(.DELETE, "\(app)/users/quinn/sessions", 406, headers: bearer, accept: nil)

            // Blocks, in each form of Layer-Patch, of a user the app made through the Server API.
            let made = try await api.sync.request(
                .POST, "\(app)/users/ruth/identity", headers: bearer,
                json: ["display_name": "Ruth", "email_address": "ruth@example.com", "metadata": ["team": "blue"]])
            #expect(made.status == 201)
            let ruth = try await api.call(.GET, "\(app)/users/ruth", 200, headers: bearer)
            #expect(ruth.json?["identity"]?["display_name"] == "Ruth")
            #expect(ruth.json?["identity"]?["metadata"] == ["team": "blue"])
            let blocks: JSONValue = [
                ["operation": "add", "property": "blocks", "id": "layer:///identities/quinn"],
                ["operation": "remove", "property": "blocks", "value": "quinn"],
                ["operation": "set", "property": "blocks", "value": []],
                ["operation": "set", "property": "suspended", "value": false],
            ]
            try await api.patch("\(app)/users/ruth", 202, headers: bearer, json: blocks)
            let ofThemselves: JSONValue = [["operation": "add", "property": "blocks", "id": "layer:///identities/ruth"]]
            try await api.patch("\(app)/users/ruth", 204, headers: bearer, json: ofThemselves)
            let badBlock: JSONValue = [["operation": "delete", "property": "blocks"]]
            #expect(try await api.patch("\(app)/users/ruth", 422, headers: bearer, json: badBlock).errorProperty == "0.operation")
            let nobody: JSONValue = [["operation": "add", "property": "blocks", "value": "quinn"]]
            try await api.patch("\(app)/users/nobody", 404, headers: bearer, json: nobody)
        }
    }
}
