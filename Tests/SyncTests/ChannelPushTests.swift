import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Channels pushed and in the changelog")
struct ChannelPushTests {
    @Test("Channel.create and Message.create over the WebSocket; members hear every change of the channel live")
    func liveOverTheSocket() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let aliceSocket = try await harness.socket(alice)
            let bobSocket = try await harness.socket(bob)
            let carolSocket = try await harness.socket(carol)

            // What the Web XDK sends: its own id, the members with the creator, null metadata.
            let channel = "layer:///channels/\(UUID().lowercased)"
            let created = try await aliceSocket.request(
                "Channel.create",
                data: [
                    "name": "fellowship", "metadata": .null, "id": .string(channel),
                    "members": ["layer:///identities/bob", "layer:///identities/alice"],
                ])
            #expect(created["success"] == .bool(true), "\(created)")
            #expect(created["data"]?["id"]?.stringValue == channel)
            #expect(created["data"]?["membership"]?["role"] == "owner")
            let announced = try await bobSocket.change("create", "Channel")
            #expect(announced["body"]?["object"]?["id"]?.stringValue == channel)
            #expect(announced["body"]?["data"]?["membership"]?["identity"]?["user_id"] == "bob")
            _ = try await aliceSocket.change("create", "Channel")

            let conflict = try await carolSocket.request("Channel.create", data: ["name": "fellowship", "members": []])
            #expect(conflict["success"] == .bool(false))
            #expect(conflict["data"]?["id"] == "conflict")
            #expect(conflict["data"]?["data"]?["id"]?.stringValue == channel)
            let bad = try await aliceSocket.request("Channel.create", data: ["name": "x", "members": "all"])
            #expect(bad["data"]?["data"]?["property"] == "members")

            // A message to the channel reaches every member's devices, the sender's included.
            let sent = try await aliceSocket.request(
                "Message.create", objectID: channel, data: ["parts": [["mime_type": "text/plain", "body": "one ring"]]])
            #expect(sent["success"] == .bool(true), "\(sent)")
            #expect(sent["data"]?["channel"]?["id"]?.stringValue == channel)
            let message = try #require(sent["data"]?["id"]?.stringValue)
            let arrived = try await bobSocket.change("create", "Message")
            #expect(arrived["body"]?["object"]?["id"]?.stringValue == message)
            #expect(arrived["body"]?["data"]?["channel"]?["id"]?.stringValue == channel)
            #expect(arrived["body"]?["data"]?["parts"]?[0]?["body"] == "one ring")
            _ = try await aliceSocket.change("create", "Message")
            let outsider = try await carolSocket.request(
                "Message.create", objectID: channel, data: ["parts": [["mime_type": "text/plain", "body": "hi"]]])
            #expect(outsider["data"]?["id"] == "access_denied")
            try await carolSocket.expectNoChannelChange()

            // Carol joins: her devices get the channel, the members her membership.
            #expect(try await carol.join(channel).status == 204)
            let joined = try await carolSocket.change("create", "Channel")
            #expect(joined["body"]?["data"]?["membership"]?["role"] == "user")
            let membership = try await bobSocket.change("create", "Membership")
            #expect(membership["body"]?["object"]?["id"]?.stringValue == "\(channel)/members/carol")
            #expect(membership["body"]?["data"]?["identity"]?["user_id"] == "carol")
            #expect(membership["body"]?["data"]?["channel"]?["id"]?.stringValue == channel)

            // A metadata change carries exactly what changed.
            let operations: JSONValue = [["operation": "set", "property": "metadata.quest", "value": "Mordor"]]
            #expect(try await bob.patch("/\(path(channel))", operations).status == 204)
            let updated = try await carolSocket.change("update", "Channel")
            #expect(updated["body"]?["data"] == operations)

            // Carol leaves: her devices drop the channel, the members her membership.
            #expect(try await carol.leave(channel).status == 204)
            let dropped = try await carolSocket.change("delete", "Channel")
            #expect(dropped["body"]?["data"]?["mode"] == "my_devices")
            let left = try await aliceSocket.change("delete", "Membership")
            #expect(left["body"]?["object"]?["id"]?.stringValue == "\(channel)/members/carol")

            #expect(try await alice.delete("/\(path(message))").status == 204)
            let unsaid = try await bobSocket.change("delete", "Message")
            #expect(unsaid["body"]?["object"]?["id"]?.stringValue == message)
            #expect(try await alice.delete("/\(path(channel))").status == 204)
            let gone = try await bobSocket.change("delete", "Channel")
            #expect(gone["body"]?["data"]?["mode"] == "all_participants")
            try await carolSocket.expectNoChannelChange()
            for socket in [aliceSocket, bobSocket, carolSocket] { await socket.close() }
        }
    }

    @Test("Channel messages arrive on the event stream and in 1.0's packets")
    func eventsAndOlderVersions() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let channel = try await alice.channel("stream", members: ["bob"])
            let stream = try await harness.events(bob)
            let legacy = try await harness.socket(bob, subprotocol: "layer-1.0")
            let message = try await alice.post("/\(path(channel))/messages", .object(textMessage("hello stream")))
            let id = try #require(message.json?["id"]?.stringValue)
            let event = try await stream.next { $0.event == "new_channel_message" }
            #expect(event.json?["channel_id"]?.stringValue == channel)
            #expect(event.json?["message"]?["id"]?.stringValue == id)
            #expect(event.json?["message"]?["channel"]?["id"]?.stringValue == channel)
            #expect(event.id != nil, "its id is its seq, to resume from")
            let packet = try await legacy.change("create", "Message")
            #expect(packet["body"]?["data"]?["sender"]?["user_id"] == "alice")
            #expect(packet["body"]?["data"]?["sender"]?["display_name"] == nil, "1.0 senders are {user_id, name}")
            #expect(
                try await alice.patch("/\(path(channel))", [["operation": "set", "property": "metadata.a", "value": "b"]]).status
                    == 204)
            let patched = try await legacy.next { $0["body"]?["object"]?["type"] == "Channel" }
            #expect(patched["body"]?["operation"] == "patch")
            stream.close()
            await legacy.close()
        }
    }

    @Test("Every change of a channel is in its members' changelogs, and a snapshot holds the channels after the conversations")
    func changelog() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(with: ["bob"])
            _ = try await alice.send("in the conversation", to: conversation)
            let anchor = try #require(try await bob.sync()["anchor"])
            _ = try await carol.conversation(with: ["alice"])
            let carolsAnchor = try #require(try await carol.sync()["anchor"])

            let channel = try await alice.channel("log", members: ["bob"])
            var messages: [String] = []
            for text in ["m1", "m2", "m3"] {
                let sent = try await alice.post("/\(path(channel))/messages", .object(textMessage(text)))
                messages.append(try #require(sent.json?["id"]?.stringValue))
            }
            let patch: JSONValue = [["operation": "set", "property": "metadata.mood", "value": "fine"]]
            #expect(try await alice.patch("/\(path(channel))", patch).status == 204)
            #expect(try await carol.join(channel).status == 204)
            #expect(try await carol.leave(channel).status == 204)
            #expect(try await alice.delete("/\(path(messages[0]))").status == 204)

            let (operations, _) = try await bob.catchUp(from: anchor)
            #expect(
                operations.compactMap { $0["type"]?.stringValue } == [
                    "new_channel", "new_channel_message", "new_channel_message", "new_channel_message", "update_channel",
                    "new_channel_member", "delete_channel_member", "delete_channel_message",
                ])
            #expect(operations.allSatisfy { $0["channel_id"]?.stringValue == channel && $0["conversation_id"] == nil })
            #expect(operations[0]["channel"]?["membership"]?["identity"]?["user_id"] == "bob")
            #expect(operations[1]["message"]?["id"]?.stringValue == messages[0])
            #expect(operations[1]["message_id"]?.stringValue == messages[0])
            #expect(operations[2]["parts"]?[0]?["body"] == "m2")
            #expect(operations[2]["message"]?["channel"]?["id"]?.stringValue == channel)
            #expect(operations[4]["patch"] == patch)
            #expect(operations[4]["channel"]?["metadata"]?["mood"] == "fine")
            #expect(operations[5]["user_id"] == "carol")
            #expect(operations[5]["membership"]?["id"]?.stringValue == "\(channel)/members/carol")
            #expect(operations[6]["identity_id"] == "layer:///identities/carol")
            #expect(operations[7]["message_id"]?.stringValue == messages[0])
            #expect(operations[7]["mode"] == "all_participants")
            // Who joined and left had the channel, then lost it from their devices.
            let carolsLog = try await carol.catchUp(from: carolsAnchor).operations
            #expect(carolsLog.compactMap { $0["type"]?.stringValue } == ["new_channel", "delete_channel"])
            #expect(carolsLog.last?["mode"] == "my_devices")

            // A snapshot: the conversation with its messages, then the channel with its messages.
            func types(_ page: JSONValue) -> [String] {
                page["operations"]?.arrayValue?.compactMap { $0["type"]?.stringValue } ?? []
            }
            let unread = try await bob.sync(anchor: 0)
            #expect(types(unread) == ["new_conversation", "new_message", "new_channel", "new_channel_message"])
            #expect(unread["operations"]?[3]?["message"]?["id"]?.stringValue == messages[2])
            let complete = try await bob.sync(anchor: 0, policy: "complete")
            #expect(
                types(complete) == [
                    "new_conversation", "new_message", "new_channel", "new_channel_message", "new_channel_message",
                ])
            let partial = try await bob.sync(anchor: 0, policy: "partial", partialCount: 1)
            #expect(partial["operations"]?.arrayValue?.last?["message"]?["id"]?.stringValue == messages[2])
            #expect(complete["more"] == false)
            #expect(complete["anchor"] == (try await bob.sync()["anchor"]))

            // Paged one operation at a time, the snapshot holds the same operations.
            var paged: [JSONValue] = []
            var cursor: JSONValue = 0
            for _ in 0..<20 {
                let page = try await bob.sync(anchor: cursor, limit: 1, policy: "complete")
                paged += page["operations"]?.arrayValue ?? []
                cursor = page["anchor"] ?? cursor
                if page["more"] != true { break }
            }
            #expect(paged.compactMap { $0["type"]?.stringValue } == types(complete))
            #expect(
                paged.compactMap { $0["message"]?["id"]?.stringValue }
                    == complete["operations"]?.arrayValue?.compactMap { $0["message"]?["id"]?.stringValue })
            #expect(try await bob.syncRaw(anchor: "c.1.nope.0").status == 422)

            // Deleted for everybody: the members' changelogs say so, and snapshots no longer hold it.
            let beforeDeletion = try #require(try await bob.sync()["anchor"])
            #expect(try await alice.delete("/\(path(channel))").status == 204)
            let deletion = try await bob.catchUp(from: beforeDeletion).operations
            #expect(deletion.map { $0["type"] } == ["delete_channel"])
            #expect(deletion.first?["mode"] == "all_participants")
            #expect(types(try await bob.sync(anchor: 0)) == ["new_conversation", "new_message"])
        }
    }
}

extension TestWebSocket {
    /// Fails if a change of a channel, a membership or a message arrives within `window`
    /// (presence packets of one's own identity come and go as they will).
    func expectNoChannelChange(
        for window: Duration = .milliseconds(400), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let types: Set<String> = ["Channel", "Membership", "Message"]
        do {
            let packet = try await next(timeout: window) { packet in
                packet["type"] == "change" && types.contains(packet["body"]?["object"]?["type"]?.stringValue ?? "")
            }
            Issue.record("expected no change of a channel, got \(packet)", sourceLocation: sourceLocation)
        } catch is PushTimeout {}
    }
}
