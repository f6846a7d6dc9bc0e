import Foundation
import LayerModels
import LayerTesting
import Testing

/// An `update` change packet carries only the properties that changed (reference 5.4), as
/// Layer-Patch operations a client applies to the object it holds: the Web XDK breaks on a `set`
/// of the whole participant list. The examples are the reference's.
@Suite("Change packets carry only what changed")
struct ChangePacketTests {
    /// The Layer-Patch of the next update of `object` (`patch` in 1.0).
    static func update(of object: String, on socket: TestWebSocket) async throws -> [JSONValue] {
        let packet = try await socket.next { packet in
            packet["type"] == "change" && packet["body"]?["object"]?["id"]?.stringValue == object
                && ["update", "patch"].contains(packet["body"]?["operation"]?.stringValue)
        }
        return packet["body"]?["data"]?.arrayValue ?? []
    }

    /// Operations in a stable order, to compare with what is expected whatever order they came in.
    static func sorted(_ patch: [JSONValue]) -> [JSONValue] {
        func key(_ operation: JSONValue) -> String {
            (operation["property"]?.stringValue ?? "") + "/" + (operation["operation"]?.stringValue ?? "")
        }
        return patch.sorted { key($0) < key($1) }
    }

    @Test("Metadata, participant and private metadata edits push just those changes, in each version")
    func onlyWhatChanged() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            _ = try await harness.user("dave")
            let metadata: JSONValue = ["title": "Lunch", "a": ["b": ["c": "x", "name": "old"]]]
            let conversation = try await alice.conversation(with: ["bob", "carol"], distinct: false, metadata: metadata)
            let aliceSocket = try await harness.socket(alice)
            let bobSocket = try await harness.socket(bob, subprotocol: "layer-1.0")
            let carolSocket = try await harness.socket(carol, subprotocol: "layer-2.0")
            let sockets = [aliceSocket, bobSocket, carolSocket]
            func patch(_ operations: JSONValue) async throws {
                let response = try await alice.patch("/\(path(conversation))", operations)
                #expect(response.status == 204, "\(response.text)")
            }

            // The reference's metadata example: one delete and two sets, deep in the object.
            try await patch([
                ["operation": "delete", "property": "metadata.a.b.c"],
                ["operation": "set", "property": "metadata.a.b.name", "value": "foo"],
                ["operation": "set", "property": "metadata.a.b.count", "value": "42"],
            ])
            let metadataChange: [JSONValue] = [
                ["operation": "delete", "property": "metadata.a.b.c"],
                ["operation": "set", "property": "metadata.a.b.count", "value": "42"],
                ["operation": "set", "property": "metadata.a.b.name", "value": "foo"],
            ]
            for socket in sockets {
                #expect(Self.sorted(try await Self.update(of: conversation, on: socket)) == metadataChange)
            }
            // Setting the whole metadata is still sent as the keys it changed; a dot in a key is escaped.
            try await patch([
                [
                    "operation": "set", "property": "metadata",
                    "value": ["title": "Dinner", "a": ["b": ["count": "42", "name": "foo"]]],
                ],
                ["operation": "set", "property": "metadata.x..y", "value": "dotted"],
            ])
            let wholeChange: [JSONValue] = [
                ["operation": "set", "property": "metadata.title", "value": "Dinner"],
                ["operation": "set", "property": "metadata.x\\.y", "value": "dotted"],
            ]
            for socket in sockets {
                #expect(Self.sorted(try await Self.update(of: conversation, on: socket)) == wholeChange)
            }
            #expect(try await bob.get("/\(path(conversation))").json?["metadata"]?["x.y"] == "dotted")

            // A participant added: by id with the BasicIdentity as value (2.0+), by user id in 1.0.
            try await patch([["operation": "add", "property": "participants", "value": "dave"]])
            for socket in [aliceSocket, carolSocket] {
                let added = try await Self.update(of: conversation, on: socket)
                #expect(added.count == 1)
                #expect(added.first?["operation"] == "add")
                #expect(added.first?["property"] == "participants")
                #expect(added.first?["id"] == "layer:///identities/dave")
                #expect(added.first?["value"]?["id"] == "layer:///identities/dave")
                #expect(added.first?["value"]?["user_id"] == "dave")
            }
            #expect(
                try await Self.update(of: conversation, on: bobSocket)
                    == [["operation": "add", "property": "participants", "value": "dave"]])

            // A participant removed: the others hear of that one; the one removed, of everybody
            // leaving their view.
            try await patch([["operation": "remove", "property": "participants", "id": .string(carol.identityID)]])
            #expect(
                try await Self.update(of: conversation, on: aliceSocket)
                    == [["operation": "remove", "property": "participants", "id": "layer:///identities/carol"]])
            #expect(
                try await Self.update(of: conversation, on: bobSocket)
                    == [["operation": "remove", "property": "participants", "value": "carol"]])
            let carolsView = try await Self.update(of: conversation, on: carolSocket)
            #expect(
                Set(carolsView.compactMap { $0["id"]?.stringValue })
                    == Set(["alice", "bob", "carol", "dave"].map { LayerID.identity(userID: $0) }))
            #expect(carolsView.allSatisfy { $0["operation"] == "remove" && $0["property"] == "participants" })

            // Private metadata reaches the writer's devices only.
            try await patch([["operation": "set", "property": "private_metadata.pinned", "value": "yes"]])
            #expect(
                try await Self.update(of: conversation, on: aliceSocket)
                    == [["operation": "set", "property": "private_metadata.pinned", "value": "yes"]])

            // A message: last_message by id and the unread count; a read receipt: that status.
            let message = try #require(try await bob.send("hi", to: conversation)["id"]?.stringValue)
            #expect(
                Self.sorted(try await Self.update(of: conversation, on: aliceSocket))
                    == [
                        ["operation": "set", "property": "last_message", "id": .string(message)],
                        ["operation": "set", "property": "unread_message_count", "value": 1],
                    ])
            let bobsUpdate = try await Self.update(of: conversation, on: bobSocket)
            #expect(!bobsUpdate.contains { $0["property"]?.stringValue?.hasPrefix("private_metadata") == true })
            #expect(try await alice.post("/\(path(message))/receipts", ["type": "read"]).status == 204)
            #expect(
                try await Self.update(of: message, on: bobSocket)
                    == [["operation": "set", "property": "recipient_status.alice", "value": "read"]])
            for socket in sockets { await socket.close() }
        }
    }

    @Test("distinct is in an update only when it changes, and a change that changes nothing is not pushed")
    func distinctOnlyWhenItChanges() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            _ = try await harness.user("carol")
            _ = try await harness.user("dave")
            let socket = try await harness.socket(bob)
            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "carol"]]
                )
                .status == 204)
            let first = Self.sorted(try await Self.update(of: conversation, on: socket))
            #expect(first.compactMap { $0["operation"]?.stringValue } == ["set", "add"])
            #expect(first.first == ["operation": "set", "property": "distinct", "value": false])
            // The same value again changes nothing, and nothing is pushed for it.
            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "carol"]]
                )
                .status == 204)
            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "dave"]]
                )
                .status == 204)
            let second = try await Self.update(of: conversation, on: socket)
            #expect(second.count == 1)
            #expect(second.first?["operation"] == "add")
            #expect(second.first?["id"] == "layer:///identities/dave")
            await socket.close()
        }
    }
}
