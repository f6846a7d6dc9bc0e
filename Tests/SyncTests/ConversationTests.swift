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

@Suite("Distinct conversations")
struct DistinctConversationTests {
    @Test("The same participant set resolves to one distinct conversation; other metadata is a conflict")
    func distinctMatch() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let created = try await alice.post("/conversations", ["participants": ["bob"], "metadata": ["topic": "a"]])
            #expect(created.status == 201)
            let id = try #require(created.json?["id"]?.stringValue)
            #expect(created.json?["distinct"] == true)

            // Bob asks for the same pair: the existing one comes back with 200.
            let again = try await bob.post("/conversations", ["participants": ["layer:///identities/alice"]])
            #expect(again.status == 200)
            #expect(again.json?["id"]?.stringValue == id)

            let same = try await bob.post("/conversations", ["participants": ["alice"], "metadata": ["topic": "a"]])
            #expect(same.status == 200)

            let conflict = try await bob.post("/conversations", ["participants": ["alice"], "metadata": ["topic": "b"]])
            #expect(conflict.status == 409)
            #expect(conflict.errorID == "conflict")
            #expect(conflict.json?["code"] == 108)
            #expect(conflict.json?["data"]?["id"]?.stringValue == id)

            let separate = try await alice.post("/conversations", ["participants": ["bob"], "distinct": false])
            #expect(separate.status == 201)
            #expect(separate.json?["id"]?.stringValue != id)
        }
    }

    @Test("Concurrent creators of one distinct conversation all get the same one")
    func concurrentCreators() async throws {
        try await SyncHarness.run { harness in
            var users: [UserClient] = []
            for name in ["ann", "ben", "cat", "dan"] { users.append(try await harness.user(name)) }
            let everyone = users.map(\.id)
            let clients = users
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for round in 0..<3 {
                    for user in clients {
                        group.addTask {
                            _ = round
                            return try await user.conversation(with: everyone.filter { $0 != user.id })
                        }
                    }
                }
                var ids: [String] = []
                for try await id in group { ids.append(id) }
                return ids
            }
            #expect(ids.count == 12)
            #expect(Set(ids).count == 1)
            let list = try await users[0].get("/conversations")
            #expect(list.headers.first(name: "Layer-Count") == "1")
        }
    }

    @Test("Changing the participants of a distinct conversation makes it non-distinct")
    func participantsChangeEndsDistinct() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let id = try await alice.conversation(with: ["bob"])
            let patch = try await alice.patch(
                "/\(path(id))", [["operation": "add", "property": "participants", "id": "layer:///identities/carol"]])
            #expect(patch.status == 204)
            let after = try await alice.get("/\(path(id))")
            #expect(after.json?["distinct"] == false)
            #expect(after.json?["participants"]?.arrayValue?.count == 3)
            // A new distinct request for alice+bob makes a new conversation.
            let fresh = try await alice.conversation(with: ["bob"])
            #expect(fresh != id)
        }
    }
}

@Suite("Conversation changes")
struct ConversationChangeTests {
    @Test("Metadata is set and deleted by path; values are strings or objects")
    func metadataPatch() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let id = try await alice.conversation(with: ["bob"], distinct: false, metadata: ["title": "Plans"])
            let patch = try await alice.patch(
                "/\(path(id))",
                [
                    ["operation": "set", "property": "metadata.stats.count", "value": "42"],
                    ["operation": "set", "property": "metadata.a..b", "value": "dotted"],
                    ["operation": "delete", "property": "metadata.title"],
                ])
            #expect(patch.status == 204)
            let metadata = try #require(try await alice.get("/\(path(id))").json?["metadata"])
            #expect(metadata == ["stats": ["count": "42"], "a.b": "dotted"])

            let number = try await alice.patch("/\(path(id))", [["operation": "set", "property": "metadata.n", "value": 3]])
            #expect(number.status == 422)
            #expect(number.errorProperty == "metadata.n")
            let unknown = try await alice.patch("/\(path(id))", [["operation": "set", "property": "created_at", "value": "x"]])
            #expect(unknown.status == 422)
            #expect(unknown.errorProperty == "created_at")
            let wrongType = try await alice.client.request(
                .PATCH, "/\(path(id))", headers: alice.auth, json: [["operation": "delete", "property": "metadata.stats"]])
            #expect(wrongType.status == 406)
            // Nothing of the refused patches was stored.
            let after = try #require(try await alice.get("/\(path(id))").json?["metadata"])
            #expect(after == metadata)

            let viaPost = try await alice.client.request(
                .POST, "/\(path(id))", headers: alice.auth + [("X-HTTP-Method-Override", "PATCH")],
                json: [["operation": "delete", "property": "metadata.stats"]], contentType: "application/vnd.layer-patch+json")
            #expect(viaPost.status == 204)
        }
    }

    @Test("Private metadata is seen only by its owner, on all of the owner's devices")
    func privateMetadata() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let aliceTablet = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let id = try await alice.conversation(with: ["bob"])
            let patch = try await alice.patch(
                "/\(path(id))", [["operation": "set", "property": "private_metadata.pinned", "value": "yes"]])
            #expect(patch.status == 204)
            #expect(try await aliceTablet.get("/\(path(id))").json?["private_metadata"] == ["pinned": "yes"])
            #expect(try await bob.get("/\(path(id))").json?["private_metadata"] == [:])
            let bobOps = try await bob.sync(anchor: 0, policy: "complete")
            let conversationOps = bobOps["operations"]?.arrayValue?.filter { $0["type"] == "new_conversation" } ?? []
            #expect(conversationOps.first?["conversation"]?["private_metadata"] == [:])
        }
    }

    @Test("New participants see earlier messages; removed ones keep what came before and nothing after")
    func membershipAndHistory() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let id = try await alice.conversation(with: ["bob"], distinct: false)
            _ = try await alice.send("before carol", to: id)
            #expect(try await carol.get("/\(path(id))/messages").status == 404)

            #expect(
                try await alice.patch("/\(path(id))", [["operation": "add", "property": "participants", "value": "carol"]]).status
                    == 204)
            let carolSees = try await carol.get("/\(path(id))/messages")
            #expect(carolSees.status == 200)
            #expect(carolSees.json?.arrayValue?.count == 1)

            _ = try await alice.send("before bob leaves", to: id)
            #expect(
                try await alice.patch(
                    "/\(path(id))", [["operation": "remove", "property": "participants", "id": .string(bob.identityID)]]
                ).status == 204)
            _ = try await alice.send("after bob left", to: id)

            let bobView = try await bob.get("/\(path(id))")
            #expect(bobView.status == 200)
            #expect(bobView.json?["participants"]?.arrayValue?.isEmpty == true)
            let bobMessages = try await bob.get("/\(path(id))/messages")
            let texts = bobMessages.json?.arrayValue?.compactMap { $0["parts"]?.arrayValue?.first?["body"]?.stringValue }
            #expect(texts == ["before bob leaves", "before carol"])
            let denied = try await bob.sendRaw("let me in", to: id)
            #expect(denied.status == 403)
            #expect(denied.errorID == "access_denied")
            #expect(
                try await bob.patch("/\(path(id))", [["operation": "set", "property": "metadata.x", "value": "y"]]).status == 403)
        }
    }

    @Test("At most 25 participants; the creator is always one of them")
    func participantLimit() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let others = (1...24).map { "user\($0)" }
            let full = try await alice.post(
                "/conversations", ["participants": .array(others.map { .string($0) }), "distinct": false])
            #expect(full.status == 201)
            #expect(full.json?["participants"]?.arrayValue?.count == 25)
            let tooMany = try await alice.post(
                "/conversations", ["participants": .array((others + ["user25"]).map { .string($0) })])
            #expect(tooMany.status == 422)
            #expect(tooMany.errorProperty == "participants")
            let id = try #require(full.json?["id"]?.stringValue)
            let add = try await alice.patch(
                "/\(path(id))", [["operation": "add", "property": "participants", "value": "user99"]])
            #expect(add.status == 422)
            #expect(try await alice.get("/conversations").headers.first(name: "Layer-Count") == "1")
        }
    }

    @Test("Deletion for all participants, from my devices, and leaving")
    func deletionModes() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let id = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            _ = try await alice.send("one", to: id)

            #expect(try await bob.delete("/\(path(id))").status == 422)
            #expect(try await bob.delete("/\(path(id))?mode=everything").status == 422)
            #expect(try await bob.delete("/\(path(id))?mode=my_devices").status == 204)
            #expect(try await bob.get("/\(path(id))").status == 404)
            #expect(try await bob.get("/conversations").headers.first(name: "Layer-Count") == "0")
            // Bob is still a participant: a new message brings the conversation back, history after the deletion only.
            _ = try await alice.send("two", to: id)
            let back = try await bob.get("/\(path(id))/messages")
            #expect(back.status == 200)
            #expect(back.json?.arrayValue?.compactMap { $0["parts"]?.arrayValue?.first?["body"]?.stringValue } == ["two"])

            #expect(try await carol.delete("/\(path(id))?mode=my_devices&leave=true").status == 204)
            let remaining = try await alice.get("/\(path(id))")
            #expect(
                Set(remaining.json?["participants"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []) == [
                    "alice", "bob",
                ])

            #expect(try await alice.delete("/\(path(id))?mode=all_participants").status == 204)
            #expect(try await alice.get("/\(path(id))").status == 404)
            #expect(try await bob.get("/\(path(id))").status == 404)
            #expect(try await alice.delete("/\(path(id))?mode=all_participants").status == 404)
        }
    }

    @Test("Lists page with page_size and from_id, sort by last message, and count")
    func paging() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            var ids: [String] = []
            for index in 0..<5 { ids.append(try await alice.conversation(with: ["friend\(index)"])) }
            let first = try await alice.get("/conversations?page_size=2")
            #expect(first.headers.first(name: "Layer-Count") == "5")
            let firstIDs = first.json?.arrayValue?.compactMap { $0["id"]?.stringValue }
            #expect(firstIDs == [ids[4], ids[3]])
            let next = try await alice.get(
                "/conversations?page_size=2&from_id=\(ids[3].addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
            #expect(next.json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [ids[2], ids[1]])
            #expect(next.headers.first(name: "Layer-Count") == "5")

            _ = try await alice.send("bump", to: ids[0])
            let byMessage = try await alice.get("/conversations?sort_by=last_message&page_size=1")
            #expect(byMessage.json?.arrayValue?.first?["id"]?.stringValue == ids[0])
            #expect(byMessage.json?.arrayValue?.first?["last_message"]?["parts"]?.arrayValue?.first?["body"] == "bump")

            #expect(try await alice.get("/conversations?page_size=0").errorProperty == "page_size")
            #expect(try await alice.get("/conversations?page_size=101").status == 422)
            #expect(try await alice.get("/conversations?sort_by=name").errorProperty == "sort_by")
            #expect(try await alice.get("/conversations?from_id=nope").errorProperty == "from_id")
        }
    }
}
