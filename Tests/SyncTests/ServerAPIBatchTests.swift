import Foundation
import LayerModels
import LayerTesting
import Testing

/// The batch form of the Server API's send: an array of messages in one request, all or none.
extension ServerAPITests {
    static func batchMessage(_ text: String, _ sender: [String: JSONValue]) -> JSONValue {
        .object(sender.merging(textMessage(text)) { $1 })
    }

    @Test("A batch sends every message in one go, in order, answered in that order")
    func batchSend() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let bob = try await harness.user("bob")
            let conversation = try await api.conversation(["alice", "bob"])
            let batch: JSONValue = [
                Self.batchMessage("one", senderIdentity("alice")),
                Self.batchMessage("two", ["sender": ["user_id": "bob"]]),
                Self.batchMessage("three", ["sender": ["name": "Support"]]),
            ]
            let sent = try await api.post("/\(path(conversation))/messages", batch)
            #expect(sent.status == 201, "\(sent.text)")
            let messages = try #require(sent.json?.arrayValue)
            #expect(messages.compactMap { $0["parts"]?.arrayValue?.first?["body"]?.stringValue } == ["one", "two", "three"])
            #expect(messages.map { $0["sender"]?["user_id"]?.stringValue } == ["alice", "bob", nil])
            #expect(messages.last?["sender"]?["name"] == "Support")
            let positions = messages.compactMap { $0["position"]?.intValue }
            #expect(positions == positions.sorted() && Set(positions).count == 3)
            #expect(messages.allSatisfy { $0["received_at"] != nil && $0["is_unread"] == nil })

            // Each reached the participants' changelogs, in order.
            let operations = try await bob.sync(anchor: 0, policy: "complete")["operations"]?.arrayValue ?? []
            let received = operations.filter { $0["type"] == "new_message" }.compactMap { $0["message_id"]?.stringValue }
            #expect(received == messages.compactMap { $0["id"]?.stringValue })
            #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "3")
        }
    }

    @Test("One bad message refuses the whole batch, naming its index, and nothing is sent")
    func batchAllOrNothing() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let conversation = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol"])
            let good = Self.batchMessage("fine", senderIdentity("alice"))
            let cases: [(JSONValue, Int, String?)] = [
                ([good, ["sender_id": "alice"]], 422, "1.parts"),
                ([good, good, Self.batchMessage("x", senderIdentity("carol"))], 422, "2.sender_id"),
                (
                    [
                        good,
                        [
                            "sender_id": "alice",
                            "parts": [["mime_type": "text/plain", "body": .string(String(repeating: "a", count: 3000))]],
                        ],
                    ], 422, "1.parts.0.body"
                ),
                ([Self.batchMessage("x", ["sender": ["name": ""]])], 422, "0.sender.name"),
                ([good, .object(textMessage("no sender"))], 422, "1.sender_id"),
                (
                    [.object(textMessage("x").merging(["sender_id": "alice", "schedule": ["delay_in_seconds": 5]]) { $1 })], 422,
                    "0.schedule"
                ),
                (
                    [.object(textMessage("x").merging(["sender_id": "alice", "id": .string(UUID().uuidString)]) { $1 })], 422,
                    "0.id"
                ),
                ([good, "not a message"], 422, "1"),
                ([], 422, "body"),
                (.array(Array(repeating: good, count: 101)), 413, "body"),
            ]
            for (batch, status, property) in cases {
                let refused = try await api.post("/\(path(conversation))/messages", batch)
                #expect(refused.status == status, "\(batch): \(refused.text)")
                #expect(refused.errorProperty == property, "\(batch): \(refused.text)")
            }
            let elsewhere = try await api.post("/conversations/\(UUID().lowercased)/messages", [good])
            #expect(elsewhere.status == 404)
            #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "0")
            #expect(try await api.get("/users/bob/\(path(conversation))").json?["last_message"] == .null)
        }
    }

    @Test("If-None-Match covers a batch as a whole: a repeat answers what the first request sent")
    func batchRepeat() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let conversation = try await api.conversation(["alice", "bob"])
            let batch: JSONValue = [
                Self.batchMessage("one", senderIdentity("alice")), Self.batchMessage("two", senderIdentity("bob")),
            ]
            let tag = UUID().uuidString
            let first = try await api.post("/\(path(conversation))/messages", batch, tag: tag)
            #expect(first.status == 201)
            let ids = try #require(first.json?.arrayValue).compactMap { $0["id"]?.stringValue }
            #expect(ids.count == 2)
            let again = try await api.post("/\(path(conversation))/messages", batch, tag: tag)
            #expect(again.status == 201)
            #expect(try #require(again.json?.arrayValue).compactMap { $0["id"]?.stringValue } == ids)
            #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "2")
            // Concurrent repeats of a new tag send it once.
            let other = UUID().uuidString
            let answers = try await withThrowingTaskGroup(of: TestResponse.self) { group in
                for _ in 0..<4 { group.addTask { try await api.post("/\(path(conversation))/messages", batch, tag: other) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 201 })
            #expect(Set(answers.map { $0.json?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [] }).count == 1)
            #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "4")
        }
    }
}
