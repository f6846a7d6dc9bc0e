import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Sync operations from devices")
struct SyncOperationTests {
    @Test("Queued operations are applied: messages, statuses (higher wins) and tags (union, own changelog only)")
    func applyOperations() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let received = try await bob.send("to alice", to: conversation)["id"]!.stringValue!
            let offline = "layer:///messages/\(UUID().uuidString.lowercased())"
            let bobAnchor = try await bob.sync(anchor: 0)["anchor"]!
            let aliceAnchor = try await alice.sync(anchor: 0)["anchor"]!
            let answer = try await alice.sync(
                anchor: 0,
                operations: [
                    [
                        "type": "new_message", "message_id": .string(offline), "conversation_id": .string(conversation),
                        "parts": [["mime_type": "text/plain", "body": "draft"]],
                    ],
                    [
                        "type": "new_message", "message_id": .string(offline), "conversation_id": .string(conversation),
                        "parts": [["mime_type": "text/plain", "body": "final"]],
                    ],
                    ["type": "update_status", "message_id": .string(received), "status": "read"],
                    ["type": "update_status", "message_id": .string(received), "status": "delivered"],
                    ["type": "update_tags", "message_id": .string(received), "tags": ["starred"]],
                    ["type": "update_tags", "message_id": .string(received), "tags": ["important"]],
                ], policy: "complete")
            #expect(answer["operations"]?.arrayValue?.contains { $0["message_id"]?.stringValue == offline } == true)
            let stored = try await bob.get("/\(path(offline))")
            #expect(stored.status == 200)
            #expect(stored.json?["parts"]?.arrayValue?.map { $0["body"] } == ["final"])
            // Only the last update_status of the batch counted; it was lower, but a status never goes down anyway.
            let status = try await bob.get("/\(path(received))")
            #expect(status.json?["recipient_status"]?[alice.identityID] == "delivered")
            _ = try await alice.sync(
                anchor: 0, operations: [["type": "update_status", "message_id": .string(received), "status": "read"]])
            _ = try await alice.sync(
                anchor: 0, operations: [["type": "update_status", "message_id": .string(received), "status": "delivered"]])
            #expect(try await bob.get("/\(path(received))").json?["recipient_status"]?[alice.identityID] == "read")

            _ = try await alice.sync(
                anchor: 0, operations: [["type": "update_tags", "message_id": .string(received), "tags": ["starred"]]])
            let (aliceOps, _) = try await alice.catchUp(from: aliceAnchor)
            let tagOps = aliceOps.filter { $0["type"] == "update_tags" }
            #expect(tagOps.last?["tags"] == ["important", "starred"])
            let (bobOps, _) = try await bob.catchUp(from: bobAnchor)
            #expect(!bobOps.contains { $0["type"] == "update_tags" })
            #expect(bobOps.contains { $0["type"] == "new_message" && $0["message_id"]?.stringValue == offline })

            // Resending a message under its id later: the last write wins.
            _ = try await alice.sync(
                anchor: 0,
                operations: [
                    [
                        "type": "new_message", "message_id": .string(offline), "conversation_id": .string(conversation),
                        "parts": [["mime_type": "text/plain", "body": "edited"]],
                    ]
                ])
            #expect(try await bob.get("/\(path(offline))").json?["parts"]?.arrayValue?.map { $0["body"] } == ["edited"])
            // Bob cannot overwrite Alice's message.
            let hijack = try await bob.syncRaw(
                anchor: 0,
                operations: [
                    [
                        "type": "new_message", "message_id": .string(offline), "conversation_id": .string(conversation),
                        "parts": [["mime_type": "text/plain", "body": "mine"]],
                    ]
                ])
            #expect(hijack.status == 409)
            // Tagging a message deleted marks it deleted on the user's devices.
            _ = try await alice.sync(
                anchor: 0, operations: [["type": "update_tags", "message_id": .string(received), "tags": ["deleted"]]])
            #expect(try await alice.get("/\(path(received))").status == 404)
            #expect(try await bob.get("/\(path(received))").status == 200)
        }
    }

    @Test("Bad operations and anchors are refused with the field named, and nothing of the batch is stored")
    func badInput() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let message = try await alice.send("x", to: conversation)["id"]!.stringValue!
            let good: JSONValue = [
                "type": "new_message", "message_id": .string("layer:///messages/\(UUID().uuidString.lowercased())"),
                "conversation_id": .string(conversation), "parts": [["mime_type": "text/plain", "body": "should not be stored"]],
            ]
            let cases: [([JSONValue], String)] = [
                ([good, ["type": "edit_message", "message_id": .string(message)]], "operations.1.type"),
                ([good, ["message_id": .string(message)]], "operations.1.type"),
                ([good, ["type": "update_status", "message_id": .string(message), "status": "sent"]], "operations.1.status"),
                ([good, ["type": "update_status", "message_id": "nope", "status": "read"]], "operations.1.message_id"),
                ([good, ["type": "update_tags", "message_id": .string(message), "tags": []]], "operations.1.tags"),
                (
                    [good, ["type": "update_tags", "message_id": .string(message), "tags": ["x"], "extra": 1]],
                    "operations.1.extra"
                ),
                (
                    [
                        [
                            "type": "new_message", "message_id": .string(message), "conversation_id": .string(conversation),
                            "parts": [["mime_type": "bad", "body": "x"]],
                        ]
                    ], "operations.0.parts.0.mime_type"
                ),
                ([good, "not an object"], "operations.1"),
                // Decoded apart from the rest of the body, parts still name their full path.
                (
                    [
                        [
                            "type": "new_message", "message_id": .string(message), "conversation_id": .string(conversation),
                            "parts": [["mime_type": 5, "body": "x"]],
                        ]
                    ], "operations.0.parts.0.mime_type"
                ),
                (
                    [
                        [
                            "type": "new_message", "message_id": .string(message), "conversation_id": .string(conversation),
                            "parts": [["mime_type": "text/plain", "content": ["id": "x", "size": .number(2.5)]]],
                        ]
                    ], "operations.0.parts.0.content.size"
                ),
            ]
            for (operations, property) in cases {
                let response = try await alice.syncRaw(anchor: 0, operations: operations)
                #expect(response.status == 422, "\(property): \(response.text)")
                #expect(response.errorProperty == property, "\(response.text)")
            }
            // A semantic failure later in the batch rolls back the earlier operations too.
            let stranger = "layer:///conversations/\(UUID().uuidString.lowercased())"
            let rolledBack = try await alice.syncRaw(
                anchor: 0,
                operations: [
                    good,
                    [
                        "type": "new_message", "message_id": .string("layer:///messages/\(UUID().uuidString.lowercased())"),
                        "conversation_id": .string(stranger), "parts": [["mime_type": "text/plain", "body": "?"]],
                    ],
                ])
            #expect(rolledBack.status == 404)
            #expect(rolledBack.errorProperty == "operations.1")
            #expect(try await alice.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "1")

            let anchors: [JSONValue] = [-1, .number(1.5), "abc", "s.1.nope.0", ["seq": 1], 1_000_000]
            for anchor in anchors {
                let response = try await alice.syncRaw(anchor: anchor)
                #expect(response.status == 422, "\(anchor)")
                #expect(response.errorProperty == "anchor", "\(anchor)")
            }
            #expect(try await alice.syncRaw(limit: 0).errorProperty == "limit")
            #expect(try await alice.syncRaw(policy: "everything").errorProperty == "policy")
            #expect(try await alice.post("/sync", ["anchor": 0, "cursor": 1]).errorProperty == "cursor")
            #expect(try await alice.client.request(.POST, "/sync", json: ["anchor": 0]).status == 401)
        }
    }
}
