import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

/// Messages through the Server API, sent as participants or named senders and acted on as a user,
/// and what they leave in the changelogs.
extension ServerAPITests {
    @Test("Messages are sent as a participant or a named sender; other senders are refused")
    func sendMessages() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol"])

            let asAlice = try await api.sendRaw("Hi", to: id, sender: senderIdentity("alice"))
            #expect(asAlice.status == 201)
            #expect(asAlice.json?["sender"]?["user_id"] == "alice")
            #expect(asAlice.json?["conversation"]?["id"]?.stringValue == id)
            #expect(asAlice.json?["recipient_status"]?["layer:///identities/alice"] == "read")
            #expect(asAlice.json?["recipient_status"]?["layer:///identities/bob"] == "sent")
            #expect(asAlice.json?["is_unread"] == nil)
            let asBob = try await api.sendRaw("Hey", to: id, sender: ["sender": ["user_id": "bob"]])
            #expect(asBob.status == 201)
            #expect(asBob.json?["sender"]?["user_id"] == "bob")
            let named = try await api.sendRaw("Scheduled downtime", to: id, sender: ["sender": ["name": "Support"]])
            #expect(named.status == 201)
            #expect(named.json?["sender"]?["name"] == "Support")
            #expect(named.json?["sender"]?["user_id"] == .null)
            #expect(named.json?["recipient_status"]?["layer:///identities/alice"] == "sent")

            let both = try await api.sendRaw("x", to: id, sender: ["sender_id": "alice", "sender": ["name": "Ops"]])
            #expect(both.status == 422)
            #expect(both.errorProperty == "sender")
            let none = try await api.sendRaw("x", to: id, sender: [:])
            #expect(none.status == 422)
            #expect(none.errorID == "missing_property")
            #expect(none.errorProperty == "sender_id")
            #expect(try await api.sendRaw("x", to: id, sender: ["sender": [:]]).errorProperty == "sender")
            #expect(try await api.sendRaw("x", to: id, sender: ["sender": ["name": "A", "user_id": "alice"]]).status == 422)
            #expect(try await api.sendRaw("x", to: id, sender: ["sender": ["name": ""]]).errorProperty == "sender.name")
            let outsider = try await api.sendRaw("x", to: id, sender: senderIdentity("carol"))
            #expect(outsider.status == 422)
            #expect(outsider.errorProperty == "sender_id")
            let stranger = try await api.sendRaw("x", to: id, sender: ["sender": ["user_id": "nobody"]])
            #expect(stranger.errorProperty == "sender.user_id")
            let withID = try await api.post(
                "/\(path(id))/messages",
                ["sender_id": "alice", "id": .string(UUID().uuidString), "parts": [["mime_type": "text/plain", "body": "x"]]])
            #expect(withID.status == 422)
            #expect(withID.errorProperty == "id")
            let noParts = try await api.post("/\(path(id))/messages", ["sender_id": "alice"])
            #expect(noParts.errorID == "missing_property")
            #expect(noParts.errorProperty == "parts")
            let unknown = try await api.sendRaw(
                "x", to: "layer:///conversations/\(UUID().lowercased)", sender: ["sender": ["name": "Ops"]])
            #expect(unknown.status == 404)

            let messageID = try #require(asAlice.json?["id"]?.stringValue)
            let list = try await api.get("/\(path(id))/messages")
            #expect(list.headers.first(name: "Layer-Count") == "3")
            let single = try await api.get("/\(path(id))/\(path(messageID))")
            #expect(single.status == 200)
            #expect(single.json?["parts"]?.arrayValue?.first?["body"] == "Hi")
            let other = try await api.conversation(["alice"])
            #expect(try await api.get("/\(path(other))/\(path(messageID))").status == 404)
            #expect(try await api.delete("/\(path(other))/\(path(messageID))").status == 404)

            #expect(try await api.delete("/\(path(id))/\(path(messageID))").status == 204)
            #expect(try await api.get("/\(path(id))/\(path(messageID))").status == 404)
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "2")
            #expect(try await api.get("/users/bob/\(path(id))/messages").headers.first(name: "Layer-Count") == "2")
        }
    }

    @Test("Acting as a user: receipts and deletions of messages")
    func actAsUser() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol"])
            let message = try await api.send("Hi", to: id, sender: senderIdentity("alice"))
            let systemPath = "/\(path(id))/\(path(message))"

            #expect(try await api.post("/users/bob/\(path(message))/receipts", ["type": "delivery"]).status == 204)
            #expect(try await api.get(systemPath).json?["recipient_status"]?["layer:///identities/bob"] == "delivered")
            #expect(try await api.post("/users/bob/\(path(message))/receipts", ["type": "read"]).status == 204)
            #expect(try await api.post("/users/bob/\(path(message))/receipts", ["type": "delivery"]).status == 204)
            #expect(try await api.get(systemPath).json?["recipient_status"]?["layer:///identities/bob"] == "read")
            let badType = try await api.post("/users/bob/\(path(message))/receipts", ["type": "seen"])
            #expect(badType.status == 422)
            #expect(badType.errorProperty == "type")
            #expect(try await api.post("/users/carol/\(path(message))/receipts", ["type": "read"]).status == 404)
            #expect(try await api.post("/users/nobody/\(path(message))/receipts", ["type": "read"]).status == 404)
            let unknownMessage = "layer:///messages/\(UUID().lowercased)"
            #expect(try await api.post("/users/bob/\(path(unknownMessage))/receipts", ["type": "read"]).status == 404)

            #expect(try await api.delete("/users/bob/\(path(message))").errorProperty == "mode")
            let notSender = try await api.delete("/users/bob/\(path(message))?mode=all_participants")
            #expect(notSender.status == 403)
            #expect(notSender.errorID == "access_denied")
            #expect(try await api.delete("/users/bob/\(path(message))?mode=my_devices").status == 204)
            #expect(listedIDs(try await api.get("/users/bob/\(path(id))/messages")) == [])
            #expect(listedIDs(try await api.get("/users/alice/\(path(id))/messages")) == [message])
            #expect(try await api.get(systemPath).status == 200)

            #expect(try await api.delete("/users/alice/\(path(message))?mode=all_participants").status == 204)
            #expect(try await api.get(systemPath).status == 404)
            #expect(listedIDs(try await api.get("/users/alice/\(path(id))/messages")) == [])
        }
    }

    @Test("Server API writes reach the changelogs of the participants, and only theirs")
    func changelogs() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            // A first conversation gives each of them a changelog to catch up from (at anchor 0,
            // /sync answers with a snapshot instead of the changes).
            _ = try await api.conversation(["alice", "carol"])
            let aliceStart = try await alice.sync()["anchor"] ?? 0
            let carolStart = try await carol.sync()["anchor"] ?? 0
            #expect(aliceStart != 0)

            let id = try await api.conversation(["alice", "bob"])
            let message = try await api.send("Welcome", to: id, sender: ["sender": ["name": "Bot"]])
            #expect(
                try await api.patch("/\(path(id))", [["operation": "set", "property": "metadata.a", "value": "b"]]).status == 204)
            #expect(try await api.post("/users/bob/\(path(message))/receipts", ["type": "read"]).status == 204)

            let (operations, anchor) = try await alice.catchUp(from: aliceStart)
            func has(_ type: String, in operations: [JSONValue]) -> Bool {
                operations.contains { $0["type"]?.stringValue == type && $0["conversation_id"]?.stringValue == id }
            }
            #expect(has("new_conversation", in: operations))
            #expect(operations.contains { $0["type"] == "new_message" && $0["message_id"]?.stringValue == message })
            #expect(has("update_conversation", in: operations))
            #expect(operations.contains { $0["type"] == "update_status" && $0["user_id"] == "bob" })
            #expect(try await carol.catchUp(from: carolStart).operations.isEmpty)

            // Bob, starting from nothing, gets the conversation and its message in his snapshot.
            let snapshot = try await bob.sync(policy: "complete")["operations"]?.arrayValue ?? []
            #expect(has("new_conversation", in: snapshot))
            #expect(snapshot.contains { $0["message_id"]?.stringValue == message })

            #expect(try await api.delete("/\(path(id))").status == 204)
            let after = try await alice.catchUp(from: anchor).operations
            #expect(has("delete_conversation", in: after))
        }
    }

}

extension ServerAPITests {
    @Test("received_at: when a message reached the user, in both Server API views; the Client API has none")
    func receivedAt() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let conversation = try await api.conversation(["alice", "bob"])
            let message = try await api.send("Hi", to: conversation, sender: senderIdentity("alice"))
            try await Task.sleep(for: .milliseconds(20))
            let add: JSONValue = [["operation": "add", "property": "participants", "value": "carol"]]
            #expect(try await api.patch("/\(path(conversation))", add).status == 204)

            func date(_ value: JSONValue?) throws -> Date {
                try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(try #require(value?.stringValue))
            }
            let system = try #require(try await api.get("/\(path(conversation))/\(path(message))").json)
            let sentAt = try date(system["sent_at"])
            #expect(try date(system["received_at"]) == sentAt)
            let listed = try #require(try await api.get("/\(path(conversation))/messages").json?.arrayValue?.first)
            #expect(try date(listed["received_at"]) == sentAt)
            for user in ["alice", "bob"] {
                let seen = try #require(try await api.get("/users/\(user)/\(path(message))").json)
                #expect(try date(seen["received_at"]) == sentAt, "\(user)")
            }
            // Carol joined after it was sent: it reached her when she joined.
            let carols = try #require(try await api.get("/users/carol/\(path(message))").json)
            #expect(try date(carols["received_at"]) > sentAt)
            let inList = try await api.get("/users/carol/\(path(conversation))/messages")
            #expect(try date(inList.json?.arrayValue?.first?["received_at"]) == date(carols["received_at"]))
            let last = try await api.get("/users/carol/\(path(conversation))")
            #expect(try date(last.json?["last_message"]?["received_at"]) == date(carols["received_at"]))

            let client = try #require(try await alice.get("/\(path(message))").json)
            #expect(client["received_at"] == nil)
            #expect(client["sent_at"] != nil)
        }
    }
}
