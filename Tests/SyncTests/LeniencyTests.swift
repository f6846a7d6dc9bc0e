import Foundation
import LayerModels
import LayerTesting
import NIOCore
import Testing

/// Where the original API was lenient with what clients send, so are we.
@Suite("Lenient where the original was")
struct LeniencyTests {
    @Test("PUT of the identity GET answered, with a field changed, replaces it; read-only fields must name the user")
    func identityRoundTrip() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let made = try await api.post(
                "/users/ns%2Fivy/identity",
                ["display_name": "Ivy", "email_address": "ivy@example.com", "identity_type": "bot", "metadata": ["a": "1"]])
            #expect(made.status == 201)
            guard case .object(var identity)? = try await api.get("/users/ns%2Fivy/identity").json else {
                Issue.record("GET identity answered no object")
                return
            }
            #expect(identity["user_id"] == "ns/ivy")
            identity["display_name"] = "Ivy R."
            let replaced = try await api.put("/users/ns%2Fivy/identity", .object(identity))
            #expect(replaced.status == 204, "\(replaced.text)")
            let after = try await api.get("/users/ns%2Fivy/identity").json
            #expect(after?["display_name"] == "Ivy R.")
            #expect(after?["email_address"] == "ivy@example.com")
            #expect(after?["identity_type"] == "bot")
            #expect(after?["metadata"] == ["a": "1"])
            // The auth service's user view reads the same.
            #expect(try await api.get("/users/ns%2Fivy").json?["identity"]?["display_name"] == "Ivy R.")

            // A POST may carry them too.
            let jon: JSONValue = [
                "user_id": "jon", "id": "layer:///identities/jon", "url": "https://x.example/identities/jon",
                "display_name": "Jon",
            ]
            #expect(try await api.post("/users/jon/identity", jon).status == 201)

            for (field, value) in [("user_id", "someone-else"), ("id", "layer:///identities/someone-else"), ("id", "ns/ivy")] {
                var changed = identity
                changed[field] = .string(value)
                changed["display_name"] = "Changed"
                let refused = try await api.put("/users/ns%2Fivy/identity", .object(changed))
                #expect(refused.status == 422, "\(field): \(refused.text)")
                #expect(refused.errorID == "invalid_property")
                #expect(refused.errorProperty == field)
            }
            #expect(try await api.get("/users/ns%2Fivy/identity").json?["display_name"] == "Ivy R.")
        }
    }

    @Test("An empty JSON array where an object belongs is 422 naming the body, whichever service and API")
    func emptyArrayBodies() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let conversation = try await api.conversation(["alice"])
            let responses = [
                try await api.post("/users/kim/identity", []),
                try await api.put("/users/alice/identity", []),
                try await api.post("/users/alice/blocks", []),
                try await api.post("/conversations", []),
                try await api.post("/\(path(conversation))/messages", []),
                try await api.post("/announcements", []),
                try await alice.post("/conversations", []),
                try await alice.post("/\(path(conversation))/messages", []),
                try await harness.client.request(.POST, "/sessions", json: []),
            ]
            for response in responses {
                #expect(response.status == 422, "\(response.text)")
                #expect(response.errorID == "invalid_property")
                #expect(response.errorProperty == "body")
            }
            #expect(try await api.get("/users/kim/identity").status == 404)
            // Not JSON at all stays a bad request.
            let broken = try await harness.client.request(
                .POST, "/apps/\(harness.appID)/users/kim/identity", headers: api.auth, body: ByteBuffer(string: "[{"))
            #expect(broken.status == 400)
        }
    }
}
