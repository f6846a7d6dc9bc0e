import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Conversations")
struct ConversationTests {
    @Test("A conversation is created with its creator, listed, fetched and counted")
    func createListGet() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice", claims: ["display_name": "Alice A."])
            let response = try await alice.post(
                "/conversations",
                ["participants": ["layer:///identities/bob"], "distinct": false, "metadata": ["title": "Lunch"]])
            #expect(response.status == 201)
            let conversation = try #require(response.json)
            let id = try #require(conversation["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///conversations/"))
            let participants = conversation["participants"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue }
            #expect(Set(participants ?? []) == ["alice", "bob"])
            let aliceIdentity = conversation["participants"]?.arrayValue?.first { $0["user_id"] == "alice" }
            #expect(aliceIdentity?["display_name"] == "Alice A.")
            #expect(conversation["metadata"]?["title"] == "Lunch")
            #expect(conversation["distinct"] == false)
            #expect(conversation["unread_message_count"] == 0)
            #expect(conversation["last_message"] == .null)

            let list = try await alice.get("/conversations")
            #expect(list.status == 200)
            #expect(list.headers.first(name: "Layer-Count") == "1")
            #expect(list.json?.arrayValue?.first?["id"]?.stringValue == id)

            let fetched = try await alice.get("/\(path(id))")
            #expect(fetched.status == 200)
            #expect(fetched.json?["id"]?.stringValue == id)

            let bob = try await harness.user("bob")
            let seen = try await bob.get("/\(path(id))")
            #expect(seen.status == 200)
            let carol = try await harness.user("carol")
            let hidden = try await carol.get("/\(path(id))")
            #expect(hidden.status == 404)
            #expect(hidden.errorID == "not_found")
        }
    }
}
