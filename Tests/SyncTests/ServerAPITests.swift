import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

@Suite("Server API conversations and messages")
struct ServerAPITests {
    @Test("Creating a conversation: 201 in the system view, a distinct match 200 with Location, 409 on other metadata")
    func createConversation() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let body: JSONValue = ["participants": ["layer:///identities/alice", "bob"], "metadata": ["title": "Plans"]]
            let created = try await api.post("/conversations", body)
            #expect(created.status == 201)
            let conversation = try #require(created.json)
            let id = try #require(conversation["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///conversations/"))
            #expect(conversation["distinct"] == true)
            #expect(conversation["metadata"]?["title"] == "Plans")
            let members = conversation["participants"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []
            #expect(Set(members) == ["alice", "bob"])
            // The system view has no per-user fields.
            #expect(conversation["unread_message_count"] == nil)
            #expect(conversation["last_message"] == nil)

            let again = try await api.post("/conversations", ["participants": ["bob", "alice"]])
            #expect(again.status == 200)
            #expect(again.json?["id"]?.stringValue == id)
            #expect(again.headers.first(name: "Location") == "/apps/\(harness.appID)/conversations/\(bareUUID(id))")

            let conflict = try await api.post(
                "/conversations", ["participants": ["alice", "bob"], "metadata": ["title": "Other"]])
            #expect(conflict.status == 409)
            #expect(conflict.errorID == "conflict")
            #expect(conflict.json?["data"]?["id"]?.stringValue == id)

            let separate = try await api.post("/conversations", ["participants": ["alice", "bob"], "distinct": false])
            #expect(separate.status == 201)
            #expect(separate.json?["id"]?.stringValue != id)
            #expect(separate.json?["distinct"] == false)

            let missing = try await api.post("/conversations", ["participants": []])
            #expect(missing.status == 422)
            #expect(missing.errorID == "missing_property")
            #expect(missing.errorProperty == "participants")
            let wrongType = try await api.post("/conversations", ["participants": ["alice", 5]])
            #expect(wrongType.status == 422)
            #expect(wrongType.errorProperty == "participants.1")
            let clientID = try await api.post("/conversations", ["participants": ["alice"], "id": .string(UUID().uuidString)])
            #expect(clientID.status == 422)
            #expect(clientID.errorProperty == "id")
            let crowd = try await api.post(
                "/conversations", ["participants": .array((0..<26).map { .string("user\($0)") })])
            #expect(crowd.status == 422)
            #expect(crowd.errorProperty == "participants")
            let badMetadata = try await api.post("/conversations", ["participants": ["alice"], "metadata": ["n": 1]])
            #expect(badMetadata.status == 422)
        }
    }

    @Test("A conversation is read, patched and deleted (twice) in the system view")
    func getPatchDelete() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"], distinct: true)
            let patched = try await api.patch(
                "/\(path(id))",
                [
                    ["operation": "add", "property": "participants", "id": "layer:///identities/carol"],
                    ["operation": "remove", "property": "participants", "value": "bob"],
                    ["operation": "set", "property": "metadata.topic", "value": "Trip"],
                ])
            #expect(patched.status == 204)
            let fetched = try await api.get("/\(path(id))")
            #expect(fetched.status == 200)
            let members = fetched.json?["participants"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []
            #expect(Set(members) == ["alice", "carol"])
            #expect(fetched.json?["metadata"]?["topic"] == "Trip")
            #expect(fetched.json?["distinct"] == false)

            let wrongType = try await api.request(
                .PATCH, "/\(path(id))", [["operation": "set", "property": "metadata", "value": [:]]])
            #expect(wrongType.status == 406)
            #expect(wrongType.errorID == "invalid_header")
            let privateMetadata = try await api.patch(
                "/\(path(id))", [["operation": "set", "property": "private_metadata.x", "value": "y"]])
            #expect(privateMetadata.status == 422)
            #expect(privateMetadata.errorProperty == "private_metadata.x")
            let overridden = try await api.request(
                .POST, "/\(path(id))", [["operation": "set", "property": "metadata.topic", "value": "Hike"]],
                headers: [("X-HTTP-Method-Override", "PATCH")], contentType: MediaType.layerPatch)
            #expect(overridden.status == 204)
            #expect(try await api.get("/\(path(id))").json?["metadata"]?["topic"] == "Hike")

            #expect(try await api.delete("/\(path(id))").status == 204)
            let gone = try await api.get("/\(path(id))")
            #expect(gone.status == 404)
            #expect(gone.errorID == "not_found")
            #expect(try await api.delete("/\(path(id))").status == 204)
            #expect(
                try await api.patch("/\(path(id))", [["operation": "set", "property": "metadata.a", "value": "b"]]).status == 404)

            let unknown = "/conversations/\(UUID().lowercased)"
            #expect(try await api.get(unknown).status == 404)
            #expect(try await api.delete(unknown).status == 404)
            #expect(try await api.get("/conversations/not-a-uuid").status == 404)
        }
    }

    @Test("The user view adds unread counts and the last message; the system view has neither")
    func userAndSystemViews() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol", "dave"])
            let first = try await api.send("Hello", to: id, sender: senderIdentity("bob"))
            let second = try await api.send("Maintenance tonight", to: id, sender: ["sender": ["name": "Ops"]])

            let list = try await api.get("/users/alice/conversations")
            #expect(list.status == 200)
            #expect(list.headers.first(name: "Layer-Count") == "1")
            #expect(listedIDs(list) == [id])
            let mine = try #require(list.json?.arrayValue?.first)
            #expect(mine["unread_message_count"] == 2)
            #expect(mine["last_message"]?["id"]?.stringValue == second)
            #expect(mine["last_message"]?["is_unread"] == true)

            let single = try await api.get("/users/alice/\(path(id))")
            #expect(single.status == 200)
            #expect(single.json?["unread_message_count"] == 2)
            let system = try await api.get("/\(path(id))")
            #expect(system.json?["unread_message_count"] == nil)
            #expect(system.json?["last_message"] == nil)

            let userMessages = try await api.get("/users/alice/\(path(id))/messages")
            #expect(userMessages.status == 200)
            #expect(listedIDs(userMessages) == [second, first])
            #expect(userMessages.json?.arrayValue?.first?["is_unread"] == true)
            let systemMessages = try await api.get("/\(path(id))/messages")
            #expect(listedIDs(systemMessages) == [second, first])
            #expect(systemMessages.headers.first(name: "Layer-Count") == "2")
            #expect(systemMessages.json?.arrayValue?.first?["is_unread"] == nil)
            let paged = try await api.get("/\(path(id))/messages?page_size=1&from_id=\(bareUUID(second))")
            #expect(listedIDs(paged) == [first])

            #expect(try await api.post("/users/alice/\(path(id))/mark_all_read", [:]).status == 204)
            #expect(try await api.get("/users/alice/\(path(id))").json?["unread_message_count"] == 0)
            #expect(try await api.get("/users/bob/\(path(id))").json?["unread_message_count"] == 1)
            let read = try await api.get("/\(path(id))/\(path(first))")
            #expect(read.json?["recipient_status"]?["layer:///identities/alice"] == "read")

            #expect(try await api.get("/users/alice/conversations?sort_by=size").status == 422)
            #expect(try await api.get("/users/alice/conversations?page_size=0").status == 422)
            let outsider = try await api.get("/users/carol/\(path(id))")
            #expect(outsider.status == 404)
            #expect(try await api.get("/users/carol/\(path(id))/messages").status == 404)
            let nobody = try await api.get("/users/nobody/conversations")
            #expect(nobody.status == 404)
            #expect(nobody.errorID == "not_found")
        }
    }
}
