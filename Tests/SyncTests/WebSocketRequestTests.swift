import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("WebSocket requests")
struct WebSocketRequestTests {
    @Test("Conversation.create and Message.create answer like their REST routes, and the changes they make are pushed")
    func createOverTheSocket() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let aliceSocket = try await harness.socket(alice)
            let bobSocket = try await harness.socket(bob)
            let created = try await aliceSocket.request(
                "Conversation.create", data: ["participants": ["layer:///identities/bob"], "metadata": ["title": "plans"]])
            #expect(created["success"] == .bool(true))
            #expect(created["method"] == "Conversation.create")
            let conversation = try #require(created["data"]?["id"]?.stringValue)
            #expect(created["data"]?["metadata"]?["title"] == "plans")
            let seen = try await bobSocket.change("create", "Conversation")
            #expect(seen["body"]?["object"]?["id"]?.stringValue == conversation)

            let conflict = try await aliceSocket.request(
                "Conversation.create", data: ["participants": ["layer:///identities/bob"], "metadata": ["title": "other"]])
            #expect(conflict["success"] == .bool(false))
            #expect(conflict["data"]?["id"] == "conflict")
            #expect(conflict["data"]?["code"] == 108)
            #expect(conflict["data"]?["data"]?["id"]?.stringValue == conversation)

            let id = "layer:///messages/\(UUID().uuidString.lowercased())"
            let sent = try await aliceSocket.request(
                "Message.create", objectID: conversation,
                data: ["id": .string(id), "parts": [["mime_type": "text/plain", "body": "over the socket"]]])
            #expect(sent["success"] == .bool(true))
            #expect(sent["data"]?["id"]?.stringValue == id)
            let arrived = try await bobSocket.change("create", "Message")
            #expect(arrived["body"]?["object"]?["id"]?.stringValue == id)
            let again = try await aliceSocket.request(
                "Message.create", objectID: conversation,
                data: ["id": .string(id), "parts": [["mime_type": "text/plain", "body": "twice"]]])
            #expect(again["data"]?["id"] == "id_in_use")
            let invalid = try await aliceSocket.request("Message.create", objectID: conversation, data: ["parts": "no"])
            #expect(invalid["success"] == .bool(false))
            #expect(invalid["data"]?["data"]?["property"]?.stringValue?.hasPrefix("parts") == true)
            let unknown = try await aliceSocket.request(
                "Message.create", objectID: conversation, data: ["parts": [], "colour": "red"])
            #expect(unknown["data"]?["data"]?["property"] == "colour")
            await aliceSocket.close()
            await bobSocket.close()
        }
    }

    @Test("A request without request_id is carried out with no response")
    func fireAndForget() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let socket = try await harness.socket(alice)
            try await socket.send([
                "type": "request",
                "body": [
                    "method": "Message.create", "object_id": .string(conversation),
                    "data": ["parts": [["mime_type": "text/plain", "body": "quiet"]]],
                ],
            ])
            let created = try await socket.change("create", "Message")
            #expect(created["body"]?["data"]?["parts"]?.arrayValue?.first?["body"] == "quiet")
            let stray = try? await socket.next(timeout: .milliseconds(300)) {
                $0["type"] == "response" && $0["body"]?["method"] == "Message.create"
            }
            #expect(stray == nil, "no response to a request without request_id")
            await socket.close()
        }
    }

    @Test("Receipts, metadata, participants, mark_all_read and deletions arrive as updates and deletes, in changelog order")
    func everyKindOfChange() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"], distinct: false)
            let message = try #require(try await alice.send("read me", to: conversation)["id"]?.stringValue)
            let socket = try await harness.socket(alice)

            #expect(try await bob.post("/\(path(message))/receipts", ["type": "read"]).status == 204)
            let receipt = try await socket.change("update", "Message")
            #expect(receipt["body"]?["data"]?.arrayValue?.first?["property"] == "recipient_status.layer:///identities/bob")
            #expect(receipt["body"]?["data"]?.arrayValue?.first?["value"] == "read")

            let metadata = try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "metadata.title", "value": "renamed"]])
            #expect(metadata.status == 204)
            let renamed = try await socket.change("update", "Conversation")
            let patch = try #require(renamed["body"]?["data"]?.arrayValue)
            #expect(patch == [["operation": "set", "property": "metadata.title", "value": "renamed"]])

            _ = try await alice.send("another", to: conversation)
            _ = try await socket.change("create", "Message")
            _ = try await socket.change("update", "Conversation")
            #expect(try await bob.post("/\(path(conversation))/mark_all_read", [:]).status == 204)
            let markAll = try await socket.next { $0["type"] == "operation" }
            #expect(markAll["body"]?["method"] == "Conversation.mark_all_read")
            #expect(markAll["body"]?["data"]?["identity"]?["id"] == "layer:///identities/bob")

            #expect(try await alice.delete("/\(path(message))?mode=all_participants").status == 204)
            let deleted = try await socket.change("delete", "Message")
            #expect(deleted["body"]?["object"]?["id"]?.stringValue == message)
            #expect(deleted["body"]?["data"]?["mode"] == "all_participants")

            #expect(try await alice.delete("/\(path(conversation))?mode=all_participants").status == 204)
            let gone = try await socket.change("delete", "Conversation")
            #expect(gone["body"]?["data"]?["mode"] == "all_participants")
            #expect(gone["body"]?["data"]?["from_position"] == .null)
            await socket.close()
        }
    }

    @Test("A socket opened with anchor gets every change after it first, then live ones, each exactly once")
    func resumeFromAnchor() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let anchor = try #require(try await alice.sync()["anchor"])
            var expected: [String] = []
            for index in 0..<30 {
                expected.append(try #require(try await alice.send("missed \(index)", to: conversation)["id"]?.stringValue))
            }
            let socket = try await harness.socket(alice, query: "&anchor=\(anchor.intValue ?? 0)")
            for index in 30..<35 {
                expected.append(try #require(try await alice.send("live \(index)", to: conversation)["id"]?.stringValue))
            }
            var received: [String] = []
            while received.count < expected.count {
                let created = try await socket.change("create", "Message")
                received.append(created["body"]?["object"]?["id"]?.stringValue ?? "?")
            }
            #expect(received == expected)
            let duplicate = try? await socket.change("create", "Message", timeout: .milliseconds(300))
            #expect(duplicate == nil, "nothing twice")
            await socket.close()
        }
    }

    @Test("Event.replay sends again every change after a packet's timestamp, then succeeds")
    func replay() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let socket = try await harness.socket(alice)
            var ids: [String] = []
            var timestamps: [String] = []
            for index in 0..<4 {
                _ = try await alice.send("m\(index)", to: conversation)
                let created = try await socket.change("create", "Message")
                ids.append(created["body"]?["object"]?["id"]?.stringValue ?? "?")
                timestamps.append(created["timestamp"]?.stringValue ?? "?")
            }
            let answer = try await socket.request("Event.replay", data: ["from_timestamp": .string(timestamps[1])])
            #expect(answer["success"] == .bool(true))
            // Everything logged after the second message: the rest of its own change (the
            // conversation update), then the third and fourth messages, nothing older.
            var replayed: [String] = []
            while let packet = try? await socket.next(timeout: .milliseconds(300)) {
                if packet["body"]?["object"]?["type"] == "Message" {
                    replayed.append(packet["body"]?["object"]?["id"]?.stringValue ?? "?")
                }
            }
            #expect(replayed == Array(ids[2...]))
            let bad = try await socket.request("Event.replay", data: ["from_timestamp": "yesterday"])
            #expect(bad["data"]?["data"]?["property"] == "from_timestamp")
            await socket.close()
        }
    }
}
