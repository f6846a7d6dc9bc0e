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

            let wrongType = try await api.request(.PATCH, "/\(path(id))", [["operation": "set", "property": "metadata", "value": [:]]])
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
            #expect(try await api.patch("/\(path(id))", [["operation": "set", "property": "metadata.a", "value": "b"]]).status == 404)

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
            let unknown = try await api.sendRaw("x", to: "layer:///conversations/\(UUID().lowercased)", sender: ["sender": ["name": "Ops"]])
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

    @Test("Every route wants a Server API token of its own app; ids of another app are not found")
    func authentication() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            let message = try await api.send("Hi", to: id, sender: senderIdentity("alice"))
            let routes: [(HTTPMethod, String)] = [
                (.POST, "/conversations"), (.GET, "/\(path(id))"), (.PATCH, "/\(path(id))"), (.DELETE, "/\(path(id))"),
                (.GET, "/\(path(id))/messages"), (.POST, "/\(path(id))/messages"), (.GET, "/\(path(id))/\(path(message))"),
                (.DELETE, "/\(path(id))/\(path(message))"), (.GET, "/users/alice/conversations"),
                (.GET, "/users/alice/\(path(id))"), (.POST, "/users/alice/\(path(id))/mark_all_read"),
                (.GET, "/users/alice/\(path(id))/messages"), (.POST, "/users/bob/\(path(message))/receipts"),
                (.DELETE, "/users/bob/\(path(message))?mode=my_devices"), (.POST, "/users/alice/identity"),
                (.GET, "/users/alice/identity"), (.PUT, "/users/alice/identity"), (.PATCH, "/users/alice/identity"),
                (.DELETE, "/users/alice/identity"), (.GET, "/users/alice/blocks"), (.POST, "/users/alice/blocks"),
                (.DELETE, "/users/alice/blocks/bob"), (.POST, "/announcements"),
            ]
            let other = try await harness.fixture.registerApp(keyIndex: 1)
            let otherToken = try await harness.fixture.serverAPIToken(app: other)
            for (method, route) in routes {
                let url = "/apps/\(harness.appID)\(route)"
                let anonymous = try await harness.client.request(method, url)
                #expect(anonymous.status == 401, "\(method) \(route) without a token")
                #expect(anonymous.errorID == "authentication_required")
                let wrong = try await harness.client.request(method, url, headers: [("Authorization", "Bearer nope")])
                #expect(wrong.status == 401, "\(method) \(route) with a wrong token")
                let foreign = try await harness.client.request(method, url, headers: [("Authorization", "Bearer \(otherToken)")])
                #expect(foreign.status == 401, "\(method) \(route) with another app's token")
            }
            // The other app's own token does not reach this app's conversations, messages or users.
            let otherAPI = ServerClient(appID: other.id.lowercased, token: otherToken, client: harness.client)
            #expect(try await otherAPI.get("/\(path(id))").status == 404)
            #expect(try await otherAPI.delete("/\(path(id))").status == 404)
            #expect(try await otherAPI.get("/\(path(id))/messages").status == 404)
            #expect(try await otherAPI.sendRaw("x", to: id, sender: ["sender": ["name": "Ops"]]).status == 404)
            #expect(try await otherAPI.get("/users/alice/conversations").status == 404)
            #expect(try await otherAPI.get("/users/alice/identity").status == 404)
            #expect(try await api.get("/\(path(id))").status == 200)

            let noAccept = try await harness.client.request(
                .GET, "/apps/\(harness.appID)/\(path(id))", headers: api.auth, accept: nil)
            #expect(noAccept.status == 406)
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
            #expect(try await api.patch("/\(path(id))", [["operation": "set", "property": "metadata.a", "value": "b"]]).status == 204)
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

    @Test("If-None-Match: a repeated tag returns the earlier resource, also under concurrent repeats")
    func requestTags() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let tag = UUID().uuidString
            let body: JSONValue = ["participants": ["alice", "bob"], "distinct": false]
            let first = try await api.post("/conversations", body, tag: tag)
            #expect(first.status == 201)
            let id = try #require(first.json?["id"]?.stringValue)
            let repeated = try await api.post("/conversations", body, tag: "\"\(tag.lowercased())\"")
            #expect(repeated.status == 201)
            #expect(repeated.json?["id"]?.stringValue == id)
            #expect(try await api.get("/users/alice/conversations").headers.first(name: "Layer-Count") == "1")

            let misused = try await api.sendRaw("x", to: id, sender: senderIdentity("alice"), tag: tag)
            #expect(misused.status == 400)
            #expect(misused.errorID == "invalid_request")
            #expect(misused.json?["data"]?["header"] == "If-None-Match")
            let malformed = try await api.post("/conversations", body, tag: "not-a-uuid")
            #expect(malformed.status == 400)
            #expect(malformed.json?["data"]?["header"] == "If-None-Match")

            let messageTag = UUID().uuidString
            let message = try await api.send("Once", to: id, sender: senderIdentity("alice"), tag: messageTag)
            #expect(try await api.send("Once", to: id, sender: senderIdentity("alice"), tag: messageTag) == message)

            // A request that failed left nothing behind: its corrected repeat runs.
            let failedTag = UUID().uuidString
            let failed = try await api.post(
                "/\(path(id))/messages", ["sender_id": "alice", "parts": [["body": "no type"]]], tag: failedTag)
            #expect(failed.status == 422)
            let retried = try await api.sendRaw("Fixed", to: id, sender: senderIdentity("alice"), tag: failedTag)
            #expect(retried.status == 201)
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "2")

            // Concurrent repeats of one tag make one message and one conversation.
            let concurrentTag = UUID().uuidString
            let sent = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await api.send("Together", to: id, sender: senderIdentity("bob"), tag: concurrentTag) }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(sent).count == 1)
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "3")

            let conversationTag = UUID().uuidString
            let made = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let response = try await api.post(
                            "/conversations", ["participants": ["dave", "erin"], "distinct": false], tag: conversationTag)
                        guard response.status == 201, let id = response.json?["id"]?.stringValue else {
                            throw FixtureError("a concurrent create answered \(response.status): \(response.text)")
                        }
                        return id
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(made).count == 1)
            #expect(try await api.get("/users/dave/conversations").headers.first(name: "Layer-Count") == "1")
        }
    }
}
