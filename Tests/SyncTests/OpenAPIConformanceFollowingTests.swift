import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

/// Following and the identity lists, in the Client API and the Server API, against the document.
extension OpenAPIConformanceTests {
    @Test("Following and the identity lists answer as documented")
    func following() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob", claims: ["first_name": "Bob"])
            // The sync service knows a user once they used it.
            try await api.call(.GET, "/conversations", 200, as: bob)
            _ = try await alice.conversation(with: ["carol"])

            try await api.call(.PUT, "/following/users/bob", 204, as: alice)
            try await api.call(.PUT, "/following/users/layer%3A%2F%2F%2Fidentities%2Fdora", 204, as: alice)
            try await api.call(.GET, "/following/users/bob", 204, as: alice)
            try await api.call(.GET, "/following/users/alice", 404, as: bob)
            try await api.call(.POST, "/following/users", 202, as: alice, json: ["erin", "layer:///identities/frank"])
            try await api.call(.POST, "/following/users", 422, as: alice, json: ["erin", ""])
            try await api.call(.POST, "/following/users", 422, as: alice, json: ["users": ["erin"]])
            try await api.call(.DELETE, "/following/users/carol", 422, as: alice)
            try await api.call(.DELETE, "/following/users/frank", 204, as: alice)
            try await api.call(.PUT, "/following/users/\(String(repeating: "x", count: 129))", 422, as: alice)
            try await api.call(.GET, "/following/users/bob", 401)

            let identities = try await api.call(.GET, "/identities?page_size=1", 200, as: alice)
            #expect(identities.headers.first(name: "Layer-Count") == "2")
            let listed = try await api.call(.GET, "/identities?from_id=erin", 200, as: alice)
            #expect(listed.json?.arrayValue?.first?["presence"]?["status"] == "offline")
            try await api.call(.GET, "/identities?page_size=501", 422, as: alice)
            try await api.call(.GET, "/identities?from_id=nobody", 422, as: alice)
            let ids = try await api.call(.GET, "/following", 200, as: alice)
            #expect(ids.headers.first(name: "Layer-Count") == "4")
            try await api.call(.GET, "/following", 200, as: alice, accept: "application/vnd.layer+json; version=1.0")
            let bobIdentity = try await api.call(.GET, "/identities/bob", 200, as: alice)
            #expect(bobIdentity.json?["presence"]?["last_seen_at"] == .null)

            let (_, bearer, app) = try await api.backend()
            let user = "\(app)/users/alice"
            try await api.call(.PUT, "\(user)/following/gina", 204, headers: bearer)
            try await api.call(.GET, "\(user)/following/gina", 204, headers: bearer)
            try await api.call(.GET, "\(user)/following/hank", 404, headers: bearer)
            try await api.call(.POST, "\(user)/following", 202, headers: bearer, json: ["hank"])
            try await api.call(.POST, "\(user)/following", 422, headers: bearer, json: [7])
            try await api.call(.DELETE, "\(user)/following/hank", 204, headers: bearer)
            try await api.call(.DELETE, "\(user)/following/carol", 422, headers: bearer)
            let serverIDs = try await api.call(.GET, "\(user)/following?page_size=2", 200, headers: bearer)
            #expect(serverIDs.headers.first(name: "Layer-Count") == "5")
            let serverIdentities = try await api.call(.GET, "\(user)/identities", 200, headers: bearer)
            #expect(serverIdentities.headers.first(name: "Layer-Count") == "2")
            try await api.call(.GET, "\(user)/identities?page_size=0", 422, headers: bearer)
            try await api.call(.GET, "\(app)/users/nobody/following", 404, headers: bearer)
            try await api.call(.PUT, "\(app)/users/nobody/following/alice", 404, headers: bearer)
            try await api.call(.GET, "\(user)/following", 401)
        }
    }
}
