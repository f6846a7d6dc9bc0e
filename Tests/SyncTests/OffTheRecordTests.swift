import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// Off-the-record messages (`"off_the_record": true` on a send): stored and delivered to their
/// participants as sent, and never indexed, nor shown with their parts to a webhook or an export.
@Suite("Off-the-record messages")
struct OffTheRecordTests {
    static let secretText = "walrus gossip"

    static func offTheRecord(_ text: String) -> JSONValue {
        ["parts": [["mime_type": "text/plain", "body": .string(text)]], "off_the_record": true]
    }

    @Test(
        "Sent through the Client API, the Server API, the WebSocket and POST /sync, each says so and reaches the others whole; search never finds it"
    )
    func sentEveryWayAndNeverFound() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let sent = try await alice.post("/\(path(conversation))/messages", Self.offTheRecord(Self.secretText))
            #expect(sent.status == 201, "\(sent.text)")
            #expect(sent.json?["off_the_record"] == true)
            let id = try #require(sent.json?["id"]?.stringValue)
            let read = try await bob.get("/\(path(id))")
            #expect(read.json?["off_the_record"] == true)
            #expect(read.json?["parts"]?.arrayValue?.first?["body"]?.stringValue == Self.secretText)
            let listed = try await bob.get("/\(path(conversation))/messages").json?.arrayValue?.first
            #expect(listed?["parts"]?.arrayValue?.first?["body"]?.stringValue == Self.secretText)

            let plain = try await alice.send("walrus in the open", to: conversation)
            #expect(plain["off_the_record"] == false)

            let server = try await harness.server()
            let asApp = try await server.post(
                "/\(path(conversation))/messages",
                [
                    "sender_id": "layer:///identities/bob", "parts": [["mime_type": "text/plain", "body": "walrus backend"]],
                    "off_the_record": true,
                ])
            #expect(asApp.status == 201, "\(asApp.text)")
            #expect(asApp.json?["off_the_record"] == true)
            let asUser = try await server.post("/users/alice/\(path(conversation))/messages", Self.offTheRecord("walrus user"))
            #expect(asUser.status == 201, "\(asUser.text)")
            #expect(asUser.json?["off_the_record"] == true)

            // A delayed send keeps the flag until it goes out.
            let later = try await server.post(
                "/\(path(conversation))/messages",
                [
                    "sender_id": "alice", "parts": [["mime_type": "text/plain", "body": "walrus later"]], "off_the_record": true,
                    "schedule": ["delay_in_seconds": 1],
                ])
            #expect(later.status == 202, "\(later.text)")
            let laterID = try #require(later.json?["id"]?.stringValue)
            var delivered: JSONValue?
            for _ in 0..<100 where delivered == nil {
                try await Task.sleep(for: .milliseconds(100))
                let answer = try await bob.get("/\(path(laterID))")
                if answer.status == 200 { delivered = answer.json }
            }
            #expect(delivered?["off_the_record"] == true)
            #expect(delivered?["parts"]?.arrayValue?.first?["body"] == "walrus later")

            let socket = try await harness.socket(alice)
            let overSocket = try await socket.request(
                "Message.create", objectID: conversation,
                data: ["parts": [["mime_type": "text/plain", "body": "walrus socket"]], "off_the_record": true])
            #expect(overSocket["success"] == .bool(true), "\(overSocket)")
            #expect(overSocket["data"]?["off_the_record"] == true)
            await socket.close()

            // A device that was offline sends it in POST /sync.
            let offline = "layer:///messages/\(UUID().lowercased)"
            _ = try await bob.sync(operations: [
                [
                    "type": "new_message", "message_id": .string(offline), "conversation_id": .string(conversation),
                    "parts": [["mime_type": "text/plain", "body": "walrus offline"]], "off_the_record": true,
                ]
            ])
            #expect(try await alice.get("/\(path(offline))").json?["off_the_record"] == true)

            // Of seven messages about walruses, search finds only the one on the record.
            for user in [alice, bob] {
                let found = try await user.get("/search?q=walrus").json?.arrayValue?.compactMap { $0["id"] }
                #expect(found == [plain["id"]!])
            }
            #expect(try await alice.get("/search?q=gossip").json == [])
        }
    }

    @Test("off_the_record must be a boolean, in a send or a POST /sync operation; a wrong one is 422 naming it and sends nothing")
    func badFlag() async throws {
        try await SyncHarness.run { harness in
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            let refused = try await alice.post(
                "/\(path(conversation))/messages",
                ["parts": [["mime_type": "text/plain", "body": "x"]], "off_the_record": "yes"])
            #expect(refused.status == 422, "\(refused.text)")
            #expect(refused.errorProperty == "off_the_record")
            let operation: JSONValue = [
                "type": "new_message", "message_id": .string("layer:///messages/\(UUID().lowercased)"),
                "conversation_id": .string(conversation), "parts": [["mime_type": "text/plain", "body": "x"]],
                "off_the_record": 1,
            ]
            let inSync = try await alice.syncRaw(operations: [operation])
            #expect(inSync.status == 422, "\(inSync.text)")
            #expect(inSync.errorProperty == "operations.0.off_the_record")
            #expect(try await alice.get("/\(path(conversation))/messages").json == [])
        }
    }

    @Test("A webhook hears of it without the parts' bodies")
    func webhookPayloadsWithholdParts() async throws {
        let receiver = WebhookReceiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                _ = try await WebhookDeliveryTests.register(harness, port: port, version: "3.0", events: ["Message.created"])
                let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
                let sent = try await alice.post("/\(path(conversation))/messages", Self.offTheRecord(Self.secretText))
                #expect(sent.status == 201)
                let delivery = try #require(try await receiver.waitFor(1).first)
                let body = try JSONDecoder().decode(JSONValue.self, from: delivery.body)
                #expect(body["message"]?["id"] == sent.json?["id"])
                #expect(body["message"]?["off_the_record"] == true)
                let part = try #require(body["message"]?["parts"]?.arrayValue?.first)
                #expect(part["mime_type"] == "text/plain")
                #expect(part["body"] == .null)
                #expect(!String(decoding: delivery.body, as: UTF8.self).contains("walrus"))
            }
        }
    }

    @Test("An export keeps it without the parts' bodies")
    func exportsWithholdParts() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (privateKey, publicPEM) = try ServerAPIExportTests.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            let secret = try await alice.post("/\(path(conversation))/messages", Self.offTheRecord(Self.secretText))
            let plain = try await alice.send("on the record", to: conversation)

            let created = try await api.post("/exports", [:])
            #expect(created.status == 202, "\(created.text)")
            let done = try await ServerAPIExportTests.completed(try #require(created.json), api: api)
            #expect(done["status"] == "completed", "\(done)")
            let lines = try await ServerAPIExportTests.open(done, api: api, key: privateKey, harness: harness)
            let messages = lines.compactMap { $0["message"] }
            let withheld = try #require(messages.first { $0["id"] == secret.json?["id"] })
            #expect(withheld["off_the_record"] == true)
            #expect(withheld["parts"]?.arrayValue?.first?["mime_type"] == "text/plain")
            #expect(withheld["parts"]?.arrayValue?.first?["body"] == nil)
            let kept = try #require(messages.first { $0["id"] == plain["id"] })
            #expect(kept["parts"]?.arrayValue?.first?["body"] == "on the record")
            #expect(!lines.contains { $0.jsonText.contains("walrus") })
        }
    }
}
