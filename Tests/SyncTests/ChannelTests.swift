import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Channels")
struct ChannelTests {
    @Test("A channel is created with its name, metadata and members; the creator owns it and sees their membership")
    func createAndRead() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let chosen = "layer:///channels/\(UUID().lowercased)"
            let created = try await alice.post(
                "/channels", channelBody("hobbits", members: ["bob"], metadata: ["topic": "second breakfast"], id: chosen))
            #expect(created.status == 201, "\(created.text)")
            let channel = try #require(created.json)
            #expect(channel["id"]?.stringValue == chosen)
            #expect(channel["name"] == "hobbits")
            #expect(channel["metadata"] == ["topic": "second breakfast"])
            #expect(channel["url"]?.stringValue?.hasSuffix("/\(path(chosen))") == true)
            #expect(channel["messages_url"]?.stringValue?.hasSuffix("/\(path(chosen))/messages") == true)
            #expect(channel["created_at"]?.stringValue != nil)
            let membership = try #require(channel["membership"])
            #expect(membership["id"]?.stringValue == "\(chosen)/members/alice")
            #expect(membership["role"] == "owner")
            #expect(membership["identity"]?["id"] == "layer:///identities/alice")
            #expect(membership["channel"]?["id"]?.stringValue == chosen)
            #expect(membership["channel"]?["name"] == "hobbits")

            // A member sees their own membership; anyone else in the app sees the channel without one.
            let bobsView = try await bob.get("/\(path(chosen))")
            #expect(bobsView.status == 200)
            #expect(bobsView.json?["membership"]?["role"] == "user")
            let carolsView = try await carol.get("/\(path(chosen))")
            #expect(carolsView.status == 200)
            #expect(carolsView.json?["membership"] == .null)
            #expect(carolsView.json?["name"] == "hobbits")

            // The same id again is id_in_use with the channel; the same name, conflict with the channel.
            let again = try await alice.post("/channels", channelBody("hobbits-2", members: [], id: chosen))
            #expect(again.status == 409)
            #expect(again.errorID == "id_in_use")
            #expect(again.json?["data"]?["id"]?.stringValue == chosen)
            let named = try await carol.post("/channels", channelBody("hobbits", members: ["alice"]))
            #expect(named.status == 409)
            #expect(named.errorID == "conflict")
            #expect(named.json?["code"] == 108)
            #expect(named.json?["data"]?["id"]?.stringValue == chosen)
            #expect(named.json?["data"]?["membership"] == .null, "Carol is not made a member by asking")
            #expect(try await carol.get("/channels").headers.first(name: "Layer-Count") == "0")

            // Bare UUIDs work in paths too.
            let bare = String(chosen.dropFirst("layer:///channels/".count))
            #expect(try await bob.get("/channels/\(bare)").json?["id"]?.stringValue == chosen)
        }
    }

    @Test("Bad creates answer 422 naming the field and create nothing")
    func badCreates() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let cases: [(JSONValue, String)] = [
                (["members": []], "name"),
                (["name": ""], "name"),
                (["name": .string(String(repeating: "n", count: 129))], "name"),
                (["name": .string(UUID().uuidString)], "name"),
                (["name": 7], "name"),
                (["name": "ok", "members": [7]], "members.0"),
                (["name": "ok", "members": ["alice", ""]], "members.1"),
                (["name": "ok", "metadata": ["count": 3]], "metadata.count"),
                (["name": "ok", "metadata": "text"], "metadata"),
                (["name": "ok", "id": "not-an-id"], "id"),
                (["name": "ok", "colour": "red"], "colour"),
            ]
            for (body, property) in cases {
                let response = try await alice.post("/channels", body)
                #expect(response.status == 422, "\(body): \(response.text)")
                #expect(response.json?["data"]?["property"]?.stringValue == property, "\(body): \(response.text)")
            }
            let crowd = (1...250).map { "user\($0)" }
            let tooMany = try await alice.post("/channels", channelBody("crowd", members: crowd))
            #expect(tooMany.status == 422)
            #expect(tooMany.json?["data"]?["property"] == "members")
            let list = try await alice.get("/channels")
            #expect(list.headers.first(name: "Layer-Count") == "0")
            // 249 others and the creator fill it exactly.
            let full = try await alice.post("/channels", channelBody("crowd", members: Array(crowd.prefix(249))))
            #expect(full.status == 201)
            let members = try await alice.get("/\(path(try #require(full.json?["id"]?.stringValue)))/members?page_size=1")
            #expect(members.headers.first(name: "Layer-Count") == "250")
        }
    }

    @Test(
        "GET /channels lists the caller's channels newest first, paged, with Layer-Count; conversations never mix with channels")
    func listsAndSeparation() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let first = try await alice.channel("one")
            let second = try await alice.channel("two", members: ["bob"])
            let third = try await alice.channel("three")
            let conversation = try await alice.conversation(with: ["bob"])

            let page = try await alice.get("/channels?page_size=2")
            #expect(page.status == 200)
            #expect(listedIDs(page) == [third, second])
            #expect(page.headers.first(name: "Layer-Count") == "3")
            let rest = try await alice.get("/channels?page_size=2&from_id=\(second)")
            #expect(listedIDs(rest) == [first])
            #expect(rest.headers.first(name: "Layer-Count") == "3")
            #expect(listedIDs(try await bob.get("/channels")) == [second])

            // Conversations and channels are apart: neither list nor route reaches the other.
            let conversations = try await alice.get("/conversations")
            #expect(listedIDs(conversations) == [conversation])
            #expect(conversations.headers.first(name: "Layer-Count") == "1")
            let channelUUID = String(second.dropFirst("layer:///channels/".count))
            let conversationUUID = String(conversation.dropFirst("layer:///conversations/".count))
            #expect(try await alice.get("/conversations/\(channelUUID)").status == 404)
            #expect(try await alice.get("/conversations/\(channelUUID)/messages").status == 404)
            #expect(try await alice.sendRaw("hi", to: "conversations/\(channelUUID)").status == 404)
            #expect(try await alice.delete("/conversations/\(channelUUID)?mode=all_participants").status == 404)
            #expect(try await alice.get("/channels/\(conversationUUID)").status == 404)
            #expect(try await alice.get("/channels/\(conversationUUID)/messages").status == 404)
            #expect(try await alice.post("/channels/\(conversationUUID)/messages", .object(textMessage("hi"))).status == 404)
            #expect(try await alice.join("channels/\(conversationUUID)").status == 404)
            #expect(try await alice.delete("/channels/\(conversationUUID)").status == 404)

            for query in ["page_size=0", "page_size=101", "page_size=x", "from_id=nope", "from_id=\(conversation)"] {
                let bad = try await alice.get("/channels?\(query)")
                #expect(bad.status == 422, "\(query)")
                #expect(bad.json?["data"]?["property"]?.stringValue == (query.hasPrefix("page") ? "page_size" : "from_id"))
            }
        }
    }

    @Test("Anyone in the app joins and leaves; members read the member list; only the owner removes others")
    func joinAndLeave() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let channel = try await alice.channel("open", members: ["bob"])
            let members = "/\(path(channel))/members"

            // Carol is no member: she may not read inside, and has no membership.
            #expect(try await carol.get(members).status == 403)
            #expect(try await carol.get("/\(path(channel))/messages").status == 403)
            #expect(try await carol.get("\(members)/carol").status == 404)
            #expect(try await carol.get("\(members)/alice").status == 403)
            #expect(try await carol.leave(channel).status == 404)

            #expect(try await carol.join(channel).status == 204)
            #expect(try await carol.join(channel).status == 204, "joining again changes nothing")
            #expect(try await carol.get("/\(path(channel))").json?["membership"]?["role"] == "user")
            let list = try await carol.get(members)
            #expect(memberIDs(list) == ["alice", "bob", "carol"])
            #expect(list.headers.first(name: "Layer-Count") == "3")
            let paged = try await carol.get("\(members)?page_size=1&from_id=\(channel)/members/alice")
            #expect(memberIDs(paged) == ["bob"])
            #expect(memberIDs(try await carol.get("\(members)?from_id=bob")) == ["carol"])
            let own = try await carol.get("\(members)/carol")
            #expect(own.status == 200)
            #expect(own.json?["id"]?.stringValue == "\(channel)/members/carol")
            #expect(own.json?["joined_at"]?.stringValue != nil)
            #expect(try await carol.get("\(members)/dave").status == 404)
            #expect(try await carol.get("/channels").headers.first(name: "Layer-Count") == "1")

            // A member adds someone else; only the owner takes someone else out.
            #expect(try await bob.join(channel, user: "dave").status == 204)
            #expect(try await bob.leave(channel, user: "dave").status == 403)
            #expect(try await alice.leave(channel, user: "dave").status == 204)
            #expect(try await alice.leave(channel, user: "dave").status == 404)
            #expect(try await carol.leave(channel).status == 204)
            #expect(try await carol.get(members).status == 403)
            #expect(try await carol.get("/channels").headers.first(name: "Layer-Count") == "0")
            #expect(try await carol.join(channel, user: "erin").status == 403, "a non-member adds nobody")
            #expect(memberIDs(try await alice.get(members)) == ["alice", "bob"])

            for query in ["page_size=0", "page_size=501", "from_id=nobody"] {
                let bad = try await alice.get("\(members)?\(query)")
                #expect(bad.status == 422, "\(query)")
            }
        }
    }

    @Test("Members send and read messages; each has its channel and no receipts; non-members and other apps are kept out")
    func messages() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let channel = try await alice.channel("talk", members: ["bob"])
            let messages = "/\(path(channel))/messages"
            let chosen = "layer:///messages/\(UUID().lowercased)"
            var body = textMessage("first")
            body["id"] = .string(chosen)
            let sent = try await alice.post(messages, .object(body))
            #expect(sent.status == 201, "\(sent.text)")
            let message = try #require(sent.json)
            #expect(message["id"]?.stringValue == chosen)
            #expect(message["channel"]?["id"]?.stringValue == channel)
            #expect(message["conversation"] == nil)
            #expect(message["recipient_status"] == nil)
            #expect(message["sender"]?["user_id"] == "alice")
            #expect(message["position"] == 1)
            #expect(message["parts"]?[0]?["body"] == "first")
            let repeated = try await alice.post(messages, .object(body))
            #expect(repeated.status == 409)
            #expect(repeated.errorID == "id_in_use")
            #expect(repeated.json?["data"]?["id"]?.stringValue == chosen)
            // A message id is taken whichever container it went to.
            let conversation = try await alice.conversation(with: ["bob"])
            #expect(try await alice.sendRaw("x", to: conversation, id: chosen).json?["id"] == "id_in_use")

            let second = try await bob.post(messages, .object(textMessage("second")))
            #expect(second.status == 201)
            let list = try await alice.get(messages)
            #expect(list.json?.arrayValue?.compactMap { $0["parts"]?[0]?["body"]?.stringValue } == ["second", "first"])
            #expect(list.headers.first(name: "Layer-Count") == "2")
            #expect(listedIDs(try await alice.get("\(messages)?from_id=\(second.json!["id"]!.stringValue!)")) == [chosen])
            #expect(try await alice.get("\(messages)?from_id=\(UUID().lowercased)").status == 422)

            // GET /messages/<id> reaches a channel message for members only; receipts do not exist.
            #expect(try await bob.get("/\(path(chosen))").json?["channel"]?["id"]?.stringValue == channel)
            #expect(try await carol.get("/\(path(chosen))").status == 404)
            #expect(try await bob.post("/\(path(chosen))/receipts", ["type": "read"]).status == 404)
            #expect(try await carol.post(messages, .object(textMessage("let me in"))).status == 403)
            #expect(try await alice.post(messages, ["parts": []]).json?["data"]?["property"] == "parts")

            // Another app sees none of it.
            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let foreign = UserClient(
                id: "alice", token: try await harness.fixture.session(user: "alice", app: otherApp), client: harness.client)
            #expect(try await foreign.get("/\(path(channel))").status == 404)
            #expect(try await foreign.get(messages).status == 404)
            #expect(try await foreign.get("/\(path(channel))/members").status == 404)
            #expect(try await foreign.join(channel).status == 404)
            #expect(try await foreign.get("/\(path(chosen))").status == 404)
            #expect(try await foreign.get("/channels").headers.first(name: "Layer-Count") == "0")
            #expect(try await foreign.post("/channels", channelBody("talk", members: [])).status == 201, "names are per app")

            // Its sender (or the owner) deletes a message for everybody; nobody else may.
            #expect(try await carol.delete("/\(path(chosen))").status == 404)
            #expect(try await bob.delete("/\(path(chosen))").status == 403)
            #expect(try await alice.delete("/\(path(chosen))?mode=my_devices").status == 422)
            #expect(try await alice.delete("/\(path(chosen))").status == 204)
            #expect(try await bob.get("/\(path(chosen))").status == 404)
            #expect(listedIDs(try await bob.get(messages)).count == 1)
            // A member who leaves no longer reads the channel's messages.
            #expect(try await bob.leave(channel).status == 204)
            #expect(try await bob.get(messages).status == 403)
            #expect(try await bob.get("/\(path(second.json!["id"]!.stringValue!))").status == 404)
        }
    }

    @Test("Members change metadata but never the name; only the owner deletes the channel")
    func metadataAndDeletion() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let channel = try await alice.channel("notes", members: ["bob"], metadata: ["topic": "old", "keep": "yes"])
            let set: JSONValue = [["operation": "set", "property": "metadata.topic", "value": "new"]]
            #expect(try await bob.patch("/\(path(channel))", set).status == 204)
            #expect(try await alice.get("/\(path(channel))").json?["metadata"] == ["topic": "new", "keep": "yes"])
            #expect(try await carol.patch("/\(path(channel))", set).status == 403)
            let rename = try await bob.patch("/\(path(channel))", [["operation": "set", "property": "name", "value": "x"]])
            #expect(rename.status == 422)
            #expect(rename.json?["data"]?["property"] == "name")
            let number = try await bob.patch(
                "/\(path(channel))", [["operation": "set", "property": "metadata.count", "value": 3]])
            #expect(number.json?["data"]?["property"] == "metadata.count")

            #expect(try await bob.delete("/\(path(channel))").status == 403)
            #expect(try await carol.delete("/\(path(channel))").status == 403)
            #expect(try await alice.delete("/\(path(channel))").status == 204)
            #expect(try await bob.get("/\(path(channel))").status == 404)
            #expect(try await alice.delete("/\(path(channel))").status == 404)
            #expect(try await bob.get("/channels").headers.first(name: "Layer-Count") == "0")
            // Its name is free again.
            #expect(try await carol.post("/channels", channelBody("notes", members: [])).status == 201)
        }
    }
}
