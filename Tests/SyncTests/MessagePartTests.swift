import Foundation
import LayerModels
import LayerSync
import LayerTesting
import Testing

/// Updatable message parts (API 3.0): the Server API lists, adds, replaces and deletes the parts
/// of a sent message; every change stamps `updated_at`, reaches a device live and one that syncs
/// later from an old anchor.
@Suite("Updatable message parts")
struct MessagePartTests {
    static func bodies(_ message: JSONValue?) -> [String] {
        message?["parts"]?.arrayValue?.compactMap { $0["body"]?.stringValue } ?? []
    }

    @Test("Add, replace one, replace all and delete: each answers, stamps updated_at, and every reader sees the parts of now")
    func changesThroughTheServerAPI() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let sent = try await alice.send("Pick one", to: conversation)
            let message = try #require(sent["id"]?.stringValue)
            let first = try #require(sent["parts"]?.arrayValue?.first?["id"]?.stringValue)
            let firstUUID = String(first.split(separator: "/").last!)
            let server = try await harness.server()
            let parts = "/\(path(conversation))/messages/\(bareUUID(message))/parts"

            let listed = try await server.get(parts)
            #expect(listed.status == 200)
            #expect(listed.json?.arrayValue?.map { $0["id"] } == [.string(first)])
            #expect(try await server.get("\(parts)/\(firstUUID)").json?["body"] == "Pick one")

            // Add a part with an id of the app's choosing.
            let chosen = UUID().uuidString.lowercased()
            let added = try await server.post(
                parts,
                ["id": .string(chosen), "mime_type": "application/vnd.layer.responsesummary-v2+json", "body": #"{"votes":1}"#])
            #expect(added.status == 201, "\(added.text)")
            #expect(added.json?["id"]?.stringValue == "\(message)/parts/\(chosen)")
            #expect(added.json?["updated_at"]?.stringValue != nil)
            #expect(try await server.post(parts, ["id": .string(chosen), "mime_type": "text/plain", "body": "x"]).status == 409)

            // Replace it: Bob reads the new body, with the times of the change.
            let replaced = try await server.put("\(parts)/\(chosen)", ["mime_type": "application/json", "body": #"{"votes":2}"#])
            #expect(replaced.status == 200, "\(replaced.text)")
            #expect(replaced.json?["body"] == #"{"votes":2}"#)
            let read = try await bob.get("/\(path(message))").json
            #expect(Self.bodies(read) == ["Pick one", #"{"votes":2}"#])
            #expect(read?["updated_at"]?.stringValue != nil)
            #expect(read?["parts"]?.arrayValue?.first?["updated_at"] == .null, "an untouched part keeps no time")
            #expect(read?["parts"]?.arrayValue?.last?["updated_at"]?.stringValue != nil)

            // Replace them all, then delete one; the last one left cannot go.
            let all = try await server.put(
                parts, ["parts": [["mime_type": "text/plain", "body": "A"], ["mime_type": "text/plain", "body": "B"]]])
            #expect(all.status == 200, "\(all.text)")
            #expect(all.json?.arrayValue?.compactMap { $0["body"]?.stringValue } == ["A", "B"])
            let ids =
                all.json?.arrayValue?.compactMap { $0["id"]?.stringValue?.split(separator: "/").last.map(String.init) } ?? []
            #expect(try await server.delete("\(parts)/\(ids[0])").status == 204)
            #expect(Self.bodies(try await alice.get("/\(path(message))").json) == ["B"])
            let last = try await server.delete("\(parts)/\(ids[1])")
            #expect(last.status == 422)
            #expect(last.errorID == "invalid_operation")
            #expect(try await server.put(parts, [["mime_type": "text/plain", "body": "bare array"]]).status == 200)
            #expect(Self.bodies(try await bob.get("/\(path(message))").json) == ["bare array"])
        }
    }

    @Test("A device hears of each change live, and one that syncs from an old anchor gets the message with its parts of now")
    func changesReachDevices() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let message = try #require(try await alice.send("Before", to: conversation)["id"]?.stringValue)
            let anchor = try await bob.sync()["anchor"] ?? 0
            let socket = try await harness.socket(bob)
            let server = try await harness.server()
            let parts = "/\(path(conversation))/messages/\(bareUUID(message))/parts"
            #expect(try await server.post(parts, ["mime_type": "text/plain", "body": "After"]).status == 201)

            let packet = try await socket.change("create", "Message")
            #expect(packet["body"]?["object"]?["id"]?.stringValue == message)
            #expect(Self.bodies(packet["body"]?["data"]) == ["Before", "After"])
            await socket.close()

            let operations = try await bob.catchUp(from: anchor).operations.filter { $0["type"] == "new_message" }
            #expect(operations.count == 1)
            #expect(Self.bodies(operations.first?["message"]) == ["Before", "After"], "\(operations)")
        }
    }

    @Test("Every API version reads the message with its parts of now, and a MessagePart webhook hears of each change")
    func versionsAndWebhooks() async throws {
        let receiver = WebhookReceiver()
        try await WebPageServer.run(receiver.routes) { port in
            var settings = SyncSettings()
            settings.webhookPrivateTargets = true
            try await SyncHarness.run(settings: settings) { harness in
                _ = try await WebhookDeliveryTests.register(
                    harness, port: port, version: "3.0", events: ["MessagePart.created", "MessagePart.updated"])
                let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
                let message = try #require(try await alice.send("Old", to: conversation)["id"]?.stringValue)
                let server = try await harness.server()
                let parts = "/\(path(conversation))/messages/\(bareUUID(message))/parts"
                let added = try await server.post(parts, ["mime_type": "text/plain", "body": "New"])
                let part = try #require(added.json?["id"]?.stringValue)
                #expect(
                    try await server.put("\(parts)/\(bareUUID(part))", ["mime_type": "text/plain", "body": "Newer"]).status == 200
                )

                for version in ["1.0", "2.0", "3.0"] {
                    let read = try await harness.client.request(
                        .GET, "/\(path(message))", headers: alice.auth, accept: APIVersionTests.accept(version))
                    #expect(Self.bodies(read.json) == ["Old", "Newer"], "\(version)")
                }
                let deliveries = try await receiver.waitFor(2)
                let events = try deliveries.map { try JSONDecoder().decode(JSONValue.self, from: $0.body) }
                #expect(events.map { $0["event"]?["type"]?.stringValue } == ["MessagePart.created", "MessagePart.updated"])
                #expect(events.allSatisfy { $0["message"]?["id"]?.stringValue == message })
            }
        }
    }

    @Test("Bad parts are refused naming the field and change nothing; unknown messages and parts are 404")
    func badRequests() async throws {
        try await SyncHarness.run { harness in
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            let sent = try await alice.send("Keep me", to: conversation)
            let message = try #require(sent["id"]?.stringValue)
            let server = try await harness.server()
            let parts = "/\(path(conversation))/messages/\(bareUUID(message))/parts"
            let cases: [(JSONValue, String)] = [
                (["body": "no type"], "mime_type"), (["mime_type": "nonsense", "body": "x"], "mime_type"),
                (["mime_type": "text/plain"], "body"), (["mime_type": "text/plain", "body": "x", "colour": "red"], "colour"),
                (["mime_type": "text/plain", "body": .string(String(repeating: "x", count: 2049))], "body"),
            ]
            for (body, property) in cases {
                let refused = try await server.post(parts, body)
                #expect(refused.status == 422, "\(body)")
                #expect(refused.errorProperty == property, "\(body): \(refused.text)")
            }
            #expect(try await server.put(parts, ["parts": []]).errorProperty == "parts")
            #expect(Self.bodies(try await alice.get("/\(path(message))").json) == ["Keep me"])
            #expect(try await server.get("/\(path(conversation))/messages/\(UUID().uuidString)/parts").status == 404)
            #expect(
                try await server.put("\(parts)/\(UUID().uuidString)", ["mime_type": "text/plain", "body": "x"]).status == 404)
            #expect(try await server.delete("\(parts)/not-a-part").status == 404)
        }
    }
}
