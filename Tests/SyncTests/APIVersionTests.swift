import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

/// Clients written for the original API ask for version 1.0, 2.0 or 3.0 (and the Server API's
/// 1.1); each gets its version's documented shapes (reference 4.1, 5.4, 6.1) of the same objects.
/// The requests and answers here are the reference's examples.
@Suite("API versions 1.0, 2.0 and 3.0")
struct APIVersionTests {
    static func accept(_ version: String) -> String { "application/vnd.layer+json; version=\(version)" }

    @Test("The Client API renders a conversation and its messages in each version's shapes")
    func clientAPI() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            _ = try await harness.user("bob")
            _ = try await harness.user("carol")
            let client = harness.client
            func call(
                _ method: HTTPMethod, _ path: String, _ version: String, json: JSONValue? = nil,
                contentType: String = MediaType.json
            ) async throws -> TestResponse {
                if let json {
                    return try await client.request(
                        method, path, headers: alice.auth, json: json, contentType: contentType, accept: Self.accept(version))
                }
                return try await client.request(method, path, headers: alice.auth, accept: Self.accept(version))
            }

            // 1.0: participants are user ids, in and out.
            let created = try await call(.POST, "/conversations", "1.0", json: ["participants": ["bob"], "distinct": false])
            #expect(created.status == 201)
            #expect(Set(created.json?["participants"]?.arrayValue ?? []) == ["alice", "bob"])
            let conversation = try #require(created.json?["id"]?.stringValue)

            let sent = try await call(
                .POST, "/\(path(conversation))/messages", "1.0",
                json: ["parts": [["body": "Hello, World!", "mime_type": "text/plain"]]])
            #expect(sent.status == 201)
            let message = try #require(sent.json?["id"]?.stringValue)
            #expect(sent.json?["sender"] == ["user_id": "alice", "name": nil])
            #expect(sent.json?["recipient_status"] == ["alice": "read", "bob": "sent"])
            #expect(sent.json?["parts"]?[0]?["id"] == .string("\(message)/parts/0"))
            #expect(sent.json?["parts"]?[0]?["url"]?.stringValue?.hasSuffix("/\(path(message))/parts/0") == true)

            // 1.0's participant patch by value (reference 4.2).
            let patched = try await call(
                .PATCH, "/\(path(conversation))", "1.0",
                json: [
                    ["operation": "add", "property": "participants", "value": "carol"],
                    ["operation": "remove", "property": "participants", "value": "bob"],
                ], contentType: MediaType.layerPatch)
            #expect(patched.status == 204)
            let read1 = try await call(.GET, "/\(path(conversation))", "1.0")
            #expect(Set(read1.json?["participants"]?.arrayValue ?? []) == ["alice", "carol"])
            #expect(read1.json?["last_message"]?["sender"]?["user_id"] == "alice")

            // 2.0: identities; parts still by index.
            let read2 = try await call(.GET, "/\(path(conversation))", "2.0")
            let identities = read2.json?["participants"]?.arrayValue ?? []
            #expect(
                Set(identities.compactMap { $0["id"]?.stringValue }) == [
                    "layer:///identities/alice", "layer:///identities/carol",
                ])
            #expect(Set(identities.compactMap { $0["user_id"]?.stringValue }) == ["alice", "carol"])
            let message2 = try await call(.GET, "/\(path(message))", "2.0")
            #expect(message2.json?["sender"]?["id"] == "layer:///identities/alice")
            #expect(message2.json?["recipient_status"]?["layer:///identities/alice"] == "read")
            #expect(message2.json?["recipient_status"]?["alice"] == nil)
            #expect(message2.json?["parts"]?[0]?["id"] == .string("\(message)/parts/0"))
            // 2.0's participant patch by identity id.
            let byID = try await call(
                .PATCH, "/\(path(conversation))", "2.0",
                json: [["operation": "add", "property": "participants", "id": "layer:///identities/bob"]],
                contentType: MediaType.layerPatch)
            #expect(byID.status == 204)

            // 3.0: parts by UUID.
            let message3 = try await call(.GET, "/\(path(message))", "3.0")
            let part = try #require(message3.json?["parts"]?[0]?["id"]?.stringValue)
            #expect(part.hasPrefix("\(message)/parts/") && UUID(uuidString: String(part.split(separator: "/").last ?? "")) != nil)
            #expect(message3.json?["recipient_status"]?["layer:///identities/alice"] == "read")

            // Lists carry the same shapes.
            let list1 = try await call(.GET, "/\(path(conversation))/messages", "1.0")
            #expect(list1.json?[0]?["sender"] == ["user_id": "alice", "name": nil])

            // Receipts are the same in every version.
            let receipt = try await call(.POST, "/\(path(message))/receipts", "1.0", json: ["type": "read"])
            #expect(receipt.status == 204)

            // What no version of the Client API had is refused as before.
            for version in ["1.1", "4.0", "2"] {
                let refused = try await call(.GET, "/conversations", version)
                #expect(refused.status == 406, "\(version)")
                #expect(refused.errorID == "invalid_header")
                #expect(refused.json?["code"] == 107)
                #expect(refused.json?["data"]?["header"] == "Accept")
            }
            // Of several ranges the highest listed version wins.
            let several = try await client.request(
                .GET, "/\(path(message))", headers: alice.auth,
                accept: "application/vnd.layer+json; version=1.0, application/vnd.layer+json; version=2.0")
            #expect(several.json?["sender"]?["id"] == "layer:///identities/alice")
        }
    }

    @Test("The Server API renders 1.x senders, participants and recipients as user ids, 2.0+ as identities")
    func serverAPI() async throws {
        try await SyncHarness.run { harness in
            _ = try await harness.user("alice")
            _ = try await harness.user("bob")
            let server = try await harness.server()
            func call(_ method: HTTPMethod, _ path: String, _ version: String, json: JSONValue? = nil) async throws
                -> TestResponse
            {
                let url = "/apps/\(server.appID)\(path)"
                if let json {
                    return try await harness.client.request(
                        method, url, headers: server.auth, json: json, accept: Self.accept(version))
                }
                return try await harness.client.request(method, url, headers: server.auth, accept: Self.accept(version))
            }

            for version in ["1.0", "1.1"] {
                let created = try await call(
                    .POST, "/conversations", version, json: ["participants": ["alice", "bob"], "distinct": false])
                #expect(created.status == 201)
                #expect(Set(created.json?["participants"]?.arrayValue ?? []) == ["alice", "bob"])
                let conversation = try #require(created.json?["id"]?.stringValue)

                // A 1.x sender is a user or a named service (reference 6.1).
                let bot = try await call(
                    .POST, "/\(path(conversation))/messages", version,
                    json: ["sender": ["name": "Support"], "parts": [["body": "Hi", "mime_type": "text/plain"]]])
                #expect(bot.status == 201)
                #expect(bot.json?["sender"] == ["user_id": nil, "name": "Support"])
                let user = try await call(
                    .POST, "/\(path(conversation))/messages", version,
                    json: ["sender": ["user_id": "alice"], "parts": [["body": "Hello", "mime_type": "text/plain"]]])
                #expect(user.status == 201)
                #expect(user.json?["sender"] == ["user_id": "alice", "name": nil])
                #expect(user.json?["recipient_status"] == ["alice": "read", "bob": "sent"])

                let announced = try await call(
                    .POST, "/announcements", version,
                    json: [
                        "recipients": ["alice", "bob"], "sender": ["name": "The Team"],
                        "parts": [["body": "Welcome", "mime_type": "text/plain"]],
                    ])
                #expect(announced.status == 202)
                #expect(Set(announced.json?["recipients"]?.arrayValue ?? []) == ["alice", "bob"])
                #expect(announced.json?["sender"] == ["user_id": nil, "name": "The Team"])
            }

            // The user view of auth's Server API: 1.x adds the user id as `id`.
            let user1 = try await call(.GET, "/users/alice", "1.0")
            #expect(user1.json?["id"] == "alice")
            #expect(user1.json?["suspended"] == false)
            #expect(user1.json?["identity"]?["user_id"] == "alice")
            let user3 = try await call(.GET, "/users/alice", "3.0")
            #expect(user3.status == 200 && user3.json?["id"] == nil)

            // Blocks: 1.x lists `{"user_id"}` objects, 2.0+ identities.
            #expect(try await call(.POST, "/users/alice/blocks", "1.0", json: ["user_id": "bob"]).status == 204)
            #expect(try await call(.GET, "/users/alice/blocks", "1.0").json == [["user_id": "bob"]])
            let blocks = try await call(.GET, "/users/alice/blocks", "2.0")
            #expect(blocks.json?[0]?["id"] == "layer:///identities/bob")

            // 2.0 and 3.0: identities; 3.0 alone addresses parts by UUID.
            let created = try await call(
                .POST, "/conversations", "2.0",
                json: ["participants": ["layer:///identities/alice", "layer:///identities/bob"], "distinct": false])
            #expect(created.json?["participants"]?[0]?["id"]?.stringValue?.hasPrefix("layer:///identities/") == true)
            let conversation = try #require(created.json?["id"]?.stringValue)
            let sent = try await call(
                .POST, "/\(path(conversation))/messages", "2.0",
                json: ["sender_id": "layer:///identities/bob", "parts": [["body": "Yo", "mime_type": "text/plain"]]])
            let message = try #require(sent.json?["id"]?.stringValue)
            #expect(sent.json?["sender"]?["user_id"] == "bob")
            #expect(sent.json?["parts"]?[0]?["id"] == .string("\(message)/parts/0"))
            let again = try await call(.GET, "/\(path(conversation))/\(path(message))", "3.0")
            #expect(again.json?["parts"]?[0]?["id"] != .string("\(message)/parts/0"))

            for version in ["4.0", "0.9"] {
                #expect(try await call(.GET, "/\(path(conversation))", version).status == 406)
            }
        }
    }

    @Test("Server API objects point at Server API paths, which the app's token can follow")
    func serverAPIURLs() async throws {
        try await SyncHarness.run { harness in
            _ = try await harness.user("alice")
            _ = try await harness.user("bob")
            let server = try await harness.server()
            let root = "\(harness.client.baseURL)/apps/\(server.appID)"
            let conversation = try await server.conversation(["alice", "bob"])
            let uuid = try #require(LayerID(parsing: conversation, as: .conversations)?.uuid.lowercased)
            let messageUUID = { (id: String) in LayerID(parsing: id, as: .messages)?.uuid.lowercased ?? id }
            let object = try await server.get("/conversations/\(uuid)")
            #expect(object.json?["url"] == .string("\(root)/conversations/\(uuid)"))
            #expect(object.json?["messages_url"] == .string("\(root)/conversations/\(uuid)/messages"))
            let alice = try #require(object.json?["participants"]?.arrayValue?.first { $0["user_id"] == "alice" })
            #expect(alice["url"] == .string("\(root)/users/alice/identity"))

            let sent = try await server.sendRaw("Hello", to: conversation, sender: senderIdentity("alice"))
            let message = try #require(sent.json?["id"]?.stringValue)
            let messageURL = "\(root)/conversations/\(uuid)/messages/\(messageUUID(message))"
            #expect(sent.json?["url"] == .string(messageURL))
            #expect(sent.json?["conversation"]?["url"] == .string("\(root)/conversations/\(uuid)"))
            #expect(sent.json?["parts"]?[0]?["message_url"] == .string(messageURL))

            // In a user's view, the message is where that user acts on it.
            let mine = try await server.get("/users/bob/conversations/\(uuid)")
            let last = mine.json?["last_message"]
            #expect(last?["url"] == .string("\(root)/users/bob/messages/\(messageUUID(message))"))
            #expect(last?["receipts_url"] == .string("\(root)/users/bob/messages/\(messageUUID(message))/receipts"))
            #expect(mine.json?["url"] == .string("\(root)/conversations/\(uuid)"))

            // Following them with the bearer token works, as a client library does.
            func follow(_ method: HTTPMethod, _ url: String, json: JSONValue? = nil, contentType: String = MediaType.json)
                async throws -> TestResponse
            {
                let relative = String(url.dropFirst(harness.client.baseURL.count))
                if let json {
                    return try await harness.client.request(
                        method, relative, headers: server.auth, json: json, contentType: contentType)
                }
                return try await harness.client.request(method, relative, headers: server.auth)
            }
            #expect(try await follow(.GET, "\(root)/conversations/\(uuid)").json?["id"] == .string(conversation))
            #expect(listedIDs(try await follow(.GET, "\(root)/conversations/\(uuid)/messages")) == [message])
            #expect(try await follow(.GET, messageURL).json?["id"] == .string(message))
            #expect(try await follow(.GET, "\(root)/users/alice/identity").json?["user_id"] == "alice")
            let receipt = try await follow(
                .POST, "\(root)/users/bob/messages/\(messageUUID(message))/receipts", json: ["type": "read"])
            #expect(receipt.status == 204)
            let patch: JSONValue = [["operation": "set", "property": "metadata.topic", "value": "lunch"]]
            #expect(
                try await follow(.PATCH, "\(root)/conversations/\(uuid)", json: patch, contentType: MediaType.layerPatch).status
                    == 204)
            #expect(try await follow(.DELETE, messageURL).status == 204)

            // The Client API keeps its own paths.
            let bob = try await harness.user("bob")
            let seen = try await bob.get("/conversations/\(uuid)")
            #expect(seen.json?["url"] == .string("\(harness.client.baseURL)/conversations/\(uuid)"))
        }
    }

    @Test("A layer-1.0 WebSocket gets 1.0 packets: user ids and `patch`; layer-3.0 beside it gets 3.0's")
    func webSocketVersions() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let old = try await harness.socket(alice, subprotocol: "layer-1.0")
            let new = try await harness.socket(alice, subprotocol: "layer-3.0")
            let two = try await harness.socket(alice, subprotocol: "layer-2.0")
            let sent = try await bob.send("Hello", to: conversation)
            let message = try #require(sent["id"]?.stringValue)

            let created1 = try await old.change("create", "Message")
            #expect(created1["body"]?["data"]?["sender"] == ["user_id": "bob", "name": nil])
            #expect(created1["body"]?["data"]?["recipient_status"]?["bob"] == "read")
            #expect(created1["body"]?["data"]?["parts"]?[0]?["id"] == .string("\(message)/parts/0"))
            let last1 = try await old.change("patch", "Conversation")
            #expect(last1["body"]?["data"]?[0]?["property"] == "last_message")

            let created3 = try await new.change("create", "Message")
            #expect(created3["body"]?["data"]?["sender"]?["id"] == "layer:///identities/bob")
            _ = try await new.change("update", "Conversation")
            _ = try await two.change("update", "Conversation")

            // Bob reads nothing yet; alice reads: her status is patched by user id in 1.0.
            let read = try await alice.post("/\(path(message))/receipts", ["type": "read"])
            #expect(read.status == 204)
            let status1 = try await old.change("patch", "Message")
            #expect(status1["body"]?["data"]?[0]?["property"] == "recipient_status.alice")
            let status3 = try await new.change("update", "Message")
            #expect(status3["body"]?["data"]?[0]?["property"] == "recipient_status.layer:///identities/alice")

            // Requests over a 1.0 socket are answered in 1.0.
            let created = try await old.request(
                "Message.create", objectID: conversation,
                data: ["parts": [["body": "Over the socket", "mime_type": "text/plain"]]])
            #expect(created["success"] == true)
            #expect(created["data"]?["sender"] == ["user_id": "alice", "name": nil])
            for socket in [old, new, two] { await socket.close() }
        }
    }
}
