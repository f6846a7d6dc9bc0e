import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Messages")
struct MessageTests {
    @Test("A message is sent with parts of any MIME type, listed newest first and fetched")
    func sendListGet() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, id) = try await harness.aliceAndBobInAConversation()
            let binary = Data((0..<200).map { UInt8($0) }).base64EncodedString()
            let response = try await alice.post(
                "/\(path(id))/messages",
                [
                    "parts": [
                        ["mime_type": "text/plain", "body": "hello"],
                        ["mime_type": "application/x.location+json", "body": "{\"lat\":1}"],
                        ["mime_type": "image/png", "body": .string(binary), "encoding": "base64"],
                    ],
                    "notification": ["title": "Alice", "text": "hello", "sound": "chime.aiff"],
                ])
            #expect(response.status == 201)
            let message = try #require(response.json)
            let messageID = try #require(message["id"]?.stringValue)
            #expect(messageID.hasPrefix("layer:///messages/"))
            #expect(message["position"] == 1)
            #expect(message["conversation"]?["id"]?.stringValue == id)
            #expect(message["sender"]?["user_id"] == "alice")
            #expect(message["is_unread"] == false)
            #expect(message["recipient_status"]?[alice.identityID] == "read")
            #expect(message["recipient_status"]?[bob.identityID] == "sent")
            #expect(message["notification"]?["sound"] == "chime.aiff")
            let parts = try #require(message["parts"]?.arrayValue)
            #expect(parts.count == 3)
            #expect(parts[2]["encoding"] == "base64")
            #expect(parts[0]["id"]?.stringValue?.hasPrefix(messageID + "/parts/") == true)

            let second = try await bob.send("hi alice", to: id)
            #expect(second["position"] == 2)
            let list = try await bob.get("/\(path(id))/messages")
            #expect(list.headers.first(name: "Layer-Count") == "2")
            #expect(list.json?.arrayValue?.compactMap { $0["position"]?.intValue } == [2, 1])
            #expect(list.json?.arrayValue?.last?["is_unread"] == true)

            let fetched = try await bob.get("/\(path(messageID))")
            #expect(fetched.status == 200)
            #expect(fetched.json?["parts"]?.arrayValue?.first?["body"] == "hello")
            let stranger = try await harness.user("mallory")
            #expect(try await stranger.get("/\(path(messageID))").status == 404)
            #expect(try await stranger.sendRaw("hi", to: id).status == 404)

            let page = try await bob.get("/\(path(id))/messages?page_size=1&from_id=\(second["id"]!.stringValue!)")
            #expect(page.json?.arrayValue?.compactMap { $0["position"]?.intValue } == [1])
        }
    }

    @Test("A client-chosen id makes a retry answer 409 id_in_use with the message")
    func clientChosenID() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let id = try await alice.conversation(with: ["bob"])
            let chosen = UUID().uuidString.lowercased()
            let first = try await alice.sendRaw("once", to: id, id: "layer:///messages/\(chosen)")
            #expect(first.status == 201)
            #expect(first.json?["id"]?.stringValue == "layer:///messages/\(chosen)")
            let retry = try await alice.sendRaw("once", to: id, id: chosen)
            #expect(retry.status == 409)
            #expect(retry.errorID == "id_in_use")
            #expect(retry.json?["code"] == 111)
            #expect(retry.json?["data"]?["id"]?.stringValue == "layer:///messages/\(chosen)")
            #expect(try await alice.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "1")

            // Someone else's retry of the id learns nothing about the message.
            let mallory = try await harness.user("mallory")
            let other = try await mallory.conversation(with: ["eve"])
            let taken = try await mallory.sendRaw("mine?", to: other, id: chosen)
            #expect(taken.status == 409)
            #expect(taken.json?["data"] == nil || taken.json?["data"] == .null)
        }
    }

    @Test("Bad parts are refused with the field named, and nothing is stored")
    func badParts() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let id = try await alice.conversation(with: ["bob"])
            let cases: [(JSONValue, String)] = [
                (["parts": [["mime_type": "textplain", "body": "x"]]], "parts.0.mime_type"),
                (["parts": [["body": "x"]]], "parts.0.mime_type"),
                (["parts": [["mime_type": "text/plain", "body": .string(String(repeating: "a", count: 2049))]]], "parts.0.body"),
                (["parts": [["mime_type": "image/png", "body": "***", "encoding": "base64"]]], "parts.0.body"),
                (
                    [
                        "parts": [
                            [
                                "mime_type": "image/png", "body": .string(Data(count: 2100).base64EncodedString()),
                                "encoding": "base64",
                            ]
                        ]
                    ],
                    "parts.0.body"
                ),
                (["parts": [["mime_type": "text/plain", "body": "x", "encoding": "gzip"]]], "parts.0.encoding"),
                (["parts": [["mime_type": "text/plain"]]], "parts.0.body"),
                (["parts": []], "parts"),
                (["notification": ["text": "no parts"]], "parts"),
                (["parts": [["mime_type": "text/plain", "body": "x"]], "colour": "red"], "colour"),
                (["parts": [["mime_type": "text/plain", "body": "x"]], "id": "not-a-uuid"], "id"),
            ]
            for (body, property) in cases {
                let response = try await alice.post("/\(path(id))/messages", body)
                #expect((400..<500).contains(response.status), "\(body)")
                #expect(response.errorProperty == property, "\(body): \(response.text)")
            }
            // Exactly 2 KB decoded is allowed.
            let limit = try await alice.post(
                "/\(path(id))/messages",
                [
                    "parts": [
                        [
                            "mime_type": "application/octet-stream", "body": .string(Data(count: 2048).base64EncodedString()),
                            "encoding": "base64",
                        ]
                    ]
                ])
            #expect(limit.status == 201)
            #expect(try await alice.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "1")
        }
    }

    @Test("Deletion for all participants by the sender, or from one user's devices")
    func deletion() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, id) = try await harness.aliceAndBobInAConversation()
            let first = try await alice.send("first", to: id)
            let second = try await alice.send("second", to: id)
            let firstPath = "/\(path(first["id"]!.stringValue!))"
            let secondPath = "/\(path(second["id"]!.stringValue!))"

            #expect(try await bob.delete("\(firstPath)?mode=all_participants").status == 403)
            #expect(try await bob.delete("\(firstPath)?mode=my_devices").status == 204)
            #expect(try await bob.get(firstPath).status == 404)
            #expect(try await alice.get(firstPath).status == 200)

            #expect(try await alice.delete("\(secondPath)?mode=all_participants").status == 204)
            #expect(try await alice.get(secondPath).status == 404)
            #expect(try await bob.get(secondPath).status == 404)
            #expect(try await bob.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "0")
            #expect(try await alice.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "1")
        }
    }
}

@Suite("Receipts")
struct ReceiptTests {
    @Test("Status goes sent < delivered < read and never lower; counts follow")
    func receipts() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let id = try await alice.conversation(with: ["bob", "carol"])
            let message = try await alice.send("read me", to: id)
            let messagePath = "/\(path(message["id"]!.stringValue!))"
            #expect(try await bob.get("/\(path(id))").json?["unread_message_count"] == 1)

            #expect(try await bob.post("\(messagePath)/receipts", ["type": "delivery"]).status == 204)
            #expect(try await alice.get(messagePath).json?["recipient_status"]?[bob.identityID] == "delivered")
            #expect(try await bob.post("\(messagePath)/receipts", ["type": "read"]).status == 204)
            #expect(try await bob.post("\(messagePath)/receipts", ["type": "delivery"]).status == 204)
            let seen = try await alice.get(messagePath)
            #expect(seen.json?["recipient_status"]?[bob.identityID] == "read")
            #expect(seen.json?["recipient_status"]?[carol.identityID] == "sent")
            // As every map of the API, with its keys sorted.
            let order = ["alice", "bob", "carol"].compactMap { seen.text.range(of: "\"layer:///identities/\($0)\":")?.lowerBound }
            #expect(order.count == 3 && order == order.sorted(), "\(seen.text)")
            #expect(try await bob.get(messagePath).json?["is_unread"] == false)
            #expect(try await bob.get("/\(path(id))").json?["unread_message_count"] == 0)
            #expect(try await carol.get("/\(path(id))").json?["unread_message_count"] == 1)
            #expect(try await bob.get("/\(path(id))").json?["total_message_count"] == 1)

            let sent = try await bob.post("\(messagePath)/receipts", ["type": "sent"])
            #expect(sent.status == 422)
            #expect(sent.errorProperty == "type")
            #expect(try await bob.post("\(messagePath)/receipts", ["kind": "read"]).status == 422)
            // The sender's own receipt changes nothing: they have read it.
            #expect(try await alice.post("\(messagePath)/receipts", ["type": "delivery"]).status == 204)
            #expect(try await alice.get(messagePath).json?["recipient_status"]?[alice.identityID] == "read")
            let mallory = try await harness.user("mallory")
            #expect(try await mallory.post("\(messagePath)/receipts", ["type": "read"]).status == 404)
        }
    }

    @Test("mark_all_read marks everything up to a position read for the caller only")
    func markAllRead() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, id) = try await harness.aliceAndBobInAConversation()
            var messages: [JSONValue] = []
            for index in 1...4 { messages.append(try await alice.send("m\(index)", to: id)) }
            #expect(try await bob.post("/\(path(id))/mark_all_read", ["position": 2]).status == 204)
            let after = try await bob.get("/\(path(id))")
            #expect(after.json?["unread_message_count"] == 2)
            let list = try await bob.get("/\(path(id))/messages")
            #expect(list.json?.arrayValue?.compactMap { $0["is_unread"]?.boolValue } == [true, true, false, false])
            #expect(
                try await alice.get("/\(path(messages[0]["id"]!.stringValue!))").json?["recipient_status"]?[bob.identityID]
                    == "read")
            #expect(try await bob.post("/\(path(id))/mark_all_read", [:]).status == 204)
            #expect(try await bob.get("/\(path(id))").json?["unread_message_count"] == 0)
            #expect(try await bob.post("/\(path(id))/mark_all_read", ["position": -1]).status == 422)
        }
    }
}

@Suite("Identities")
struct ClientIdentityTests {
    @Test("Identity fields come from the session's claims; only people who share a conversation see them")
    func identityFromClaims() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user(
                "alice", claims: ["display_name": "Alice", "avatar_url": "https://example.com/a.png"])
            let bob = try await harness.user("bob")
            let mine = try await alice.get("/identities/alice")
            #expect(mine.status == 200)
            #expect(mine.json?["display_name"] == "Alice")
            #expect(mine.json?["id"] == "layer:///identities/alice")
            #expect(try await bob.get("/identities/alice").status == 404)
            _ = try await alice.conversation(with: ["bob"])
            let seen = try await bob.get("/identities/alice")
            #expect(seen.status == 200)
            #expect(seen.json?["avatar_url"] == "https://example.com/a.png")
            // A later session with other claims updates the identity on its first request here.
            let renamed = try await harness.user("alice", claims: ["display_name": "Alice B."])
            #expect(try await renamed.get("/conversations").status == 200)
            #expect(try await bob.get("/identities/alice").json?["display_name"] == "Alice B.")
        }
    }
}
