import AsyncHTTPClient
import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

/// The client API flows of the conformance suite: real responses against the documented schemas.
extension OpenAPIConformanceTests {
    @Test("Conversations, messages, receipts and identities answer as documented")
    func conversationsAndMessages() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice", claims: ["display_name": "Alice", "first_name": "Alice"])
            let bob = try await api.user("bob")
            let carol = try await api.user("carol")

            // Creates: new (201), the distinct one again (200), other metadata (409 conflict), a
            // client-chosen id used twice (409 id_in_use); and what is refused.
            let chat: JSONValue = ["participants": ["layer:///identities/bob"], "metadata": ["title": "Chat"]]
            let created = try await api.call(.POST, "/conversations", 201, as: alice, json: chat)
            let conversation = try #require(created.json?["id"]?.stringValue)
            let again = try await api.call(.POST, "/conversations", 200, as: alice, json: chat)
            #expect(again.json?["id"]?.stringValue == conversation)
            let conflict = try await api.call(
                .POST, "/conversations", 409, as: alice,
                json: ["participants": ["layer:///identities/bob"], "metadata": ["title": "Other"]])
            #expect(conflict.errorID == "conflict")
            api.expect(conflict.json?["data"], is: "Conversation")
            let chosen = UUID().lowercased
            let group: JSONValue = ["id": .string(chosen), "participants": ["bob", "carol"], "distinct": false]
            try await api.call(.POST, "/conversations", 201, as: alice, json: group)
            let inUse = try await api.call(.POST, "/conversations", 409, as: alice, json: group)
            #expect(inUse.errorID == "id_in_use")
            api.expect(inUse.json?["data"], is: "Conversation")
            try await api.call(.POST, "/conversations", 422, as: alice, json: ["colour": "red"])
            try await api.call(.POST, "/conversations", 422, as: alice, json: ["participants": [1]])
            let notJSON = try await api.sync.request(
                .POST, "/conversations", headers: alice.auth, body: ByteBuffer(string: "{no"))
            api.check(notJSON, "POST", "/conversations", 400)
            let huge: JSONValue = ["participants": ["bob"], "metadata": ["x": .string(String(repeating: "a", count: 70_000))]]
            try await api.call(.POST, "/conversations", 413, as: alice, json: huge)
            try await api.call(.POST, "/conversations", 401, json: chat)
            try await api.call(.POST, "/conversations", 401, headers: AuthFixture.sessionHeader("no-such-session"), json: chat)
            try await api.call(
                .POST, "/conversations", 406, as: alice, json: chat, accept: "application/vnd.layer+json; version=4.0")
            let inline = try await api.harness.fixture.identityToken(user: "alice")
            let opened = try await api.call(
                .GET, "/conversations", 200, headers: [("Authorization", "Layer identity-token=\"\(inline)\"")])
            #expect(opened.headers.first(name: "X-Layer-User-ID") == "alice")
            #expect(opened.headers.first(name: "X-Layer-Session-Token") != nil)
            // A token in the query string opens push connections only (it would end up in logs).
            try await api.call(.GET, "/conversations?session_token=\(alice.token)", 401)

            // Messages: sent (201), a repeat of the id (409 with the message), listed, fetched.
            let conversationPath = "/\(path(conversation))"
            let messageID = UUID().lowercased
            let hello: JSONValue = [
                "id": .string(messageID),
                "parts": [
                    ["mime_type": "text/plain", "body": "Hello"],
                    ["mime_type": "application/octet-stream", "body": "AAEC", "encoding": "base64"],
                ],
                "notification": ["title": "Alice", "text": "Hello"],
            ]
            let sent = try await api.call(.POST, "\(conversationPath)/messages", 201, as: alice, json: hello)
            let message = try #require(sent.json?["id"]?.stringValue)
            let repeated = try await api.call(.POST, "\(conversationPath)/messages", 409, as: alice, json: hello)
            api.expect(repeated.json?["data"], is: "Message")
            try await api.call(.POST, "\(conversationPath)/messages", 422, as: alice, json: ["parts": []])
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, as: alice,
                json: ["parts": [["mime_type": "text/plain", "body": .string(String(repeating: "x", count: 3000))]]])
            try await api.call(
                .POST, "\(conversationPath)/messages", 404, as: carol,
                json: ["parts": [["mime_type": "text/plain", "body": "?"]]])
            _ = try await bob.send("Hi Alice", to: conversation)

            let conversations = try await api.call(.GET, "/conversations?page_size=10&sort_by=last_message", 200, as: alice)
            #expect(conversations.headers.first(name: "Layer-Count") == "2")
            try await api.call(.GET, "/conversations?page_size=0", 422, as: alice)
            try await api.call(.GET, "/conversations?sort_by=colour", 422, as: alice)
            let seen = try await api.call(.GET, conversationPath, 200, as: bob)
            #expect(seen.json?["last_message"]?["parts"]?.arrayValue?.first?["body"] == "Hi Alice")
            #expect(seen.json?["unread_message_count"] == 1)
            try await api.call(.GET, conversationPath, 404, as: carol)
            try await api.call(.GET, "/conversations/not-an-id", 404, as: alice)
            let messages = try await api.call(.GET, "\(conversationPath)/messages?page_size=1", 200, as: alice)
            #expect(messages.headers.first(name: "Layer-Count") == "2")
            try await api.call(.GET, "\(conversationPath)/messages?from_id=\(message)", 200, as: alice)
            try await api.call(.GET, "\(conversationPath)/messages?from_id=nope", 422, as: alice)
            let fetched = try await api.call(.GET, "/\(path(message))", 200, as: bob)
            #expect(fetched.json?["is_unread"] == true)
            #expect(fetched.json?["sender"]?["display_name"] == "Alice")

            // Receipts and read state.
            try await api.call(.POST, "/\(path(message))/receipts", 204, as: bob, json: ["type": "delivery"])
            try await api.call(.POST, "/\(path(message))/receipts", 204, as: bob, json: ["type": "read"])
            try await api.call(.POST, "/\(path(message))/receipts", 422, as: bob, json: ["type": "sent"])
            try await api.call(.POST, "/\(path(message))/receipts", 422, as: bob, json: ["kind": "read"])
            try await api.call(.POST, "/\(path(message))/receipts", 404, as: carol, json: ["type": "read"])
            try await api.call(.POST, "\(conversationPath)/mark_all_read", 204, as: alice)
            try await api.call(.POST, "\(conversationPath)/mark_all_read", 204, as: bob, json: ["position": 1])
            try await api.call(.POST, "\(conversationPath)/mark_all_read", 422, as: bob, json: ["position": -1])
            let read = try await api.call(.GET, "/\(path(message))", 200, as: alice)
            #expect(read.json?["recipient_status"]?["layer:///identities/bob"] == "read")

            // Identities of the people one shares a conversation with.
            let identity = try await api.call(.GET, "/identities/alice", 200, as: bob)
            #expect(identity.json?["first_name"] == "Alice")
            #expect(identity.json?["phone_number"] == .null)
            let dora = try await api.user("dora/1")
            _ = try await dora.conversation(with: ["alice"])
            let encoded = try await api.call(.GET, "/identities/dora%2F1", 200, as: alice)
            #expect(encoded.json?["id"] == "layer:///identities/dora%2F1")
            let stranger = try await api.user("erin")
            try await api.call(.GET, "/identities/alice", 404, as: stranger)

            // Changes: metadata, participants, private metadata; the Layer-Patch content type.
            let rename: JSONValue = [["operation": "set", "property": "metadata.title", "value": "Renamed"]]
            try await api.patch(conversationPath, 204, as: alice, json: rename)
            try await api.call(
                .POST, conversationPath, 204, as: alice, headers: [("X-HTTP-Method-Override", "PATCH")], json: rename,
                contentType: MediaType.layerPatch, documentedAs: "PATCH")
            #expect(
                try await api.call(.PATCH, conversationPath, 406, as: alice, json: rename).json?["data"]?["header"]
                    == "Content-Type")
            let add: JSONValue = [
                ["operation": "add", "property": "participants", "id": "layer:///identities/carol"],
                ["operation": "set", "property": "private_metadata.pinned", "value": "yes"],
            ]
            try await api.patch(conversationPath, 204, as: alice, json: add)
            try await api.patch(
                conversationPath, 422, as: alice, json: [["operation": "set", "property": "colour", "value": "red"]])
            let notAnArray: JSONValue = ["operation": "set"]
            #expect(try await api.patch(conversationPath, 422, as: alice, json: notAnArray).errorProperty == "body")
            let nowCarol = try await api.call(.GET, conversationPath, 200, as: carol)
            #expect(nowCarol.json?["distinct"] == false)

            // Deletions.
            try await api.call(.DELETE, "/\(path(message))", 422, as: alice)
            try await api.call(.DELETE, "/\(path(message))?mode=all_participants", 403, as: bob)
            try await api.call(.DELETE, "/\(path(message))?mode=my_devices", 204, as: bob)
            try await api.call(.DELETE, "/\(path(message))?mode=everything", 422, as: alice)
            try await api.call(.DELETE, "/\(path(message))?destroy=true", 204, as: alice)
            try await api.call(.GET, "/\(path(message))", 404, as: alice)
            try await api.call(.DELETE, "\(conversationPath)?mode=my_devices&leave=true", 204, as: carol)
            let left = try await api.call(
                .POST, "\(conversationPath)/messages", 403, as: carol,
                json: ["parts": [["mime_type": "text/plain", "body": "?"]]])
            #expect(left.errorID == "access_denied")
            try await api.call(.DELETE, "\(conversationPath)?mode=all_participants", 204, as: alice)
            try await api.call(.GET, conversationPath, 404, as: bob)
        }
    }

    @Test("POST /sync answers as documented: snapshots, pages, changes of every type, and refusals")
    func sync() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let first = try await bob.send("one", to: conversation)
            _ = try await bob.send("two", to: conversation)
            let firstID = try #require(first["id"]?.stringValue)

            for policy in ["complete", "unread_only", "partial"] {
                let snapshot = try await api.call(
                    .POST, "/sync", 200, as: alice, json: ["anchor": 0, "policy": .string(policy), "partial_count": 1])
                #expect(snapshot.json?["more"] == false)
                #expect(snapshot.json?["operations"]?.arrayValue?.first?["type"] == "new_conversation")
            }
            // A snapshot in pages: the anchor is a string until the last page.
            let page = try await api.call(.POST, "/sync", 200, as: alice, json: ["anchor": 0, "limit": 1, "policy": "complete"])
            #expect(page.json?["more"] == true)
            let cursor = try #require(page.json?["anchor"])
            #expect(cursor.stringValue != nil)
            try await api.call(.POST, "/sync", 200, as: alice, json: ["anchor": cursor, "limit": 1, "policy": "complete"])
            let latest = try #require(try await api.call(.POST, "/sync", 200, as: alice, json: [:]).json?["anchor"])

            // A device's queued operations, then every kind of change after the anchor.
            let newMessage = "layer:///messages/\(UUID().lowercased)"
            let operations: JSONValue = [
                [
                    "type": "new_message", "message_id": .string(newMessage), "conversation_id": .string(conversation),
                    "parts": [["mime_type": "text/plain", "body": "offline"]],
                ],
                ["type": "update_status", "message_id": .string(firstID), "status": "read"],
                ["type": "update_tags", "message_id": .string(firstID), "tags": ["starred"]],
            ]
            try await api.call(.POST, "/sync", 200, as: alice, json: ["anchor": latest, "operations": operations])
            try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "metadata.title", "value": "Renamed"]])
            _ = try await alice.post("/\(path(conversation))/mark_all_read", [:])
            _ = try await alice.delete("/\(path(newMessage))?mode=all_participants")
            let group = try await alice.conversation(with: ["bob"], distinct: false)
            _ = try await alice.delete("/\(path(group))?mode=my_devices")
            let changes = try await api.call(.POST, "/sync", 200, as: alice, json: ["anchor": latest])
            let types = Set(changes.json?["operations"]?.arrayValue?.compactMap { $0["type"]?.stringValue } ?? [])
            #expect(
                types == [
                    "new_message", "update_status", "update_tags", "update_conversation", "delete_message", "new_conversation",
                    "delete_conversation",
                ])
            let bobChanges = try await api.call(.POST, "/sync", 200, as: bob, json: ["anchor": 1, "limit": 2])
            #expect(bobChanges.json?["more"] == true)

            // Refusals name the field, inside operations too.
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: ["anchor": "nonsense"]).errorProperty == "anchor")
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: ["anchor": 1_000_000]).errorProperty == "anchor")
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: ["limit": 0]).errorProperty == "limit")
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: ["policy": "some"]).errorProperty == "policy")
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: ["since": 0]).errorProperty == "since")
            let badOperation: JSONValue = [
                "operations": [["type": "update_status", "message_id": .string(firstID), "status": "sent"]]
            ]
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: badOperation).errorProperty == "operations.0.status")
            let unknownMessage: JSONValue = [
                "operations": [["type": "update_tags", "message_id": .string(UUID().lowercased), "tags": ["x"]]]
            ]
            try await api.call(.POST, "/sync", 404, as: alice, json: unknownMessage)
            #expect(try await api.call(.POST, "/sync", 422, as: alice, json: []).errorProperty == "body")
            try await api.call(.POST, "/sync", 400, as: alice, body: ByteBuffer(string: "["))
            try await api.call(.POST, "/sync", 401, json: [:])
        }
    }

    @Test("Rich content answers as documented, from the upload slot to the download")
    func content() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let payload = ByteBuffer(bytes: (0..<5000).map { UInt8($0 % 251) })
            let upload = [("Upload-Content-Type", "application/x-test"), ("Upload-Content-Length", "5000")]
            let slot = try await api.call(.POST, "/content", 201, as: alice, headers: upload)
            let content = try #require(slot.json?["id"]?.stringValue)
            let uploadPath = try api.localPath(try #require(slot.json?["upload_url"]?.stringValue))
            try await api.call(.GET, "/\(path(content))", 404, as: alice)
            try await api.call(.POST, "/content", 422, as: alice, headers: [("Upload-Content-Length", "5000")])
            try await api.call(
                .POST, "/content", 422, as: alice, headers: [("Upload-Content-Type", "nonsense"), ("Upload-Content-Length", "5")])
            try await api.call(.POST, "/content", 422, as: alice, headers: upload + [("Upload-Origin", "not an origin")])
            try await api.call(
                .POST, "/content", 413, as: alice,
                headers: [("Upload-Content-Type", "text/plain"), ("Upload-Content-Length", "99999999999")])
            try await api.call(.POST, "/content", 401, headers: upload)

            // The signed upload URL: no Accept header, no session.
            let forged = uploadPath.replacingOccurrences(of: "signature=", with: "signature=x")
            try await api.call(.PUT, forged, 403, body: payload, contentType: "application/x-test", accept: nil)
            try await api.call(
                .PUT, uploadPath, 422, body: ByteBuffer(string: "short"), contentType: "application/x-test", accept: nil)
            let stored = try await api.call(.PUT, uploadPath, 200, body: payload, contentType: "application/x-test", accept: nil)
            try await api.call(.PUT, uploadPath, 422, body: payload, contentType: "application/x-test", accept: nil)
            let downloadPath = try api.localPath(try #require(stored.json?["download_url"]?.stringValue))

            // The download serves the bytes with their own type, which the document gives as */*.
            let download = try await api.sync.request(.GET, downloadPath, accept: nil)
            #expect(download.status == 200)
            #expect(download.headers.first(name: "Content-Type") == "application/x-test")
            #expect(download.body == payload)
            #expect(download.headers.first(name: "X-Request-Id") != nil)
            let documented = api.document.operation("GET", downloadPath)?.operation["responses"]?["200"]?["content"]
            #expect(documented?["*/*"] != nil)
            try await api.call(.GET, downloadPath.replacingOccurrences(of: "expires=", with: "expires=1"), 403, accept: nil)

            // A part that refers to it, as the recipient sees it, and the refresh of its link.
            try await api.call(.GET, "/\(path(content))", 200, as: alice)
            try await api.call(.GET, "/\(path(content))", 404, as: bob)
            let conversation = try await alice.conversation(with: ["bob"])
            let part: JSONValue = [
                "parts": [["mime_type": "application/x-test", "content": ["id": .string(content), "size": 5000]]]
            ]
            let message = try await api.call(.POST, "/\(path(conversation))/messages", 201, as: alice, json: part)
            #expect(message.json?["parts"]?.arrayValue?.first?["content"]?["download_url"]?.stringValue != nil)
            try await api.call(.GET, "/\(path(content))", 200, as: bob)
            // A declared size is no reason to refuse: the part takes the real one.
            let wrongSize: JSONValue = [
                "parts": [["mime_type": "application/x-test", "content": ["id": .string(content), "size": 1]]]
            ]
            let resized = try await api.call(.POST, "/\(path(conversation))/messages", 201, as: alice, json: wrongSize)
            #expect(resized.json?["parts"]?.arrayValue?.first?["content"]?["size"] == 5000)
            let unknown: JSONValue = [
                "parts": [["mime_type": "application/x-test", "content": ["id": .string(UUID().lowercased), "size": 1]]]
            ]
            try await api.call(.POST, "/\(path(conversation))/messages", 422, as: alice, json: unknown)

            // The same upload URL also takes the file of a multipart form.
            let formSlot = try await api.call(.POST, "/content", 201, as: alice, headers: upload)
            let formPath = try api.localPath(try #require(formSlot.json?["upload_url"]?.stringValue))
            let boundary = ContentFormUploadTests.boundary
            let form = ByteBuffer(bytes: ContentFormUploadTests.form(Array(buffer: payload)))
            try await api.call(.POST, formPath, 400, body: form, contentType: "text/plain", accept: nil)
            try await api.call(
                .POST, formPath, 400, body: ByteBuffer(string: "--\(boundary)\r\nno header"),
                contentType: "multipart/form-data; boundary=\(boundary)", accept: nil)
            let multipart = "multipart/form-data; boundary=\(boundary)"
            try await api.call(.POST, formPath, 200, body: form, contentType: multipart, accept: nil)
            try await api.call(.POST, formPath, 422, body: form, contentType: multipart, accept: nil)
        }
    }

    @Test("Announcements answer as documented, sent by the Server API and read by their recipients")
    func announcements() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            _ = try await api.user("bob")
            let (_, bearer, app) = try await api.backend()
            let announcement: JSONValue = [
                "recipients": ["layer:///identities/alice", "bob"], "sender": ["name": "Support"],
                "parts": [["mime_type": "text/plain", "body": "Maintenance tonight"]], "notification": ["text": "Maintenance"],
            ]
            let sent = try await api.call(.POST, "\(app)/announcements", 202, headers: bearer, json: announcement)
            let id = try #require(sent.json?["id"]?.stringValue)
            #expect(sent.json?["sender"]?["name"] == "Support")
            let tag = [("If-None-Match", UUID().uuidString)]
            let tagged = try await api.call(.POST, "\(app)/announcements", 202, headers: bearer + tag, json: announcement)
            let repeated = try await api.call(.POST, "\(app)/announcements", 202, headers: bearer + tag, json: announcement)
            #expect(tagged.json?["id"] == repeated.json?["id"])
            try await api.call(
                .POST, "\(app)/announcements", 422, headers: bearer,
                json: ["recipients": [], "sender": ["name": "S"], "parts": [["mime_type": "text/plain", "body": "x"]]])
            try await api.call(
                .POST, "\(app)/announcements", 422, headers: bearer,
                json: ["recipients": ["bob"], "parts": [["mime_type": "text/plain", "body": "x"]]])
            try await api.call(
                .POST, "\(app)/announcements", 400, headers: bearer + [("If-None-Match", "nope")], json: announcement)
            try await api.call(.POST, "\(app)/announcements", 401, json: announcement)

            let list = try await api.call(.GET, "/announcements", 200, as: alice)
            #expect(list.headers.first(name: "Layer-Count") == "2")
            let one = try await api.call(.GET, "/\(path(id))", 200, as: alice)
            #expect(one.json?["is_unread"] == true)
            try await api.call(.POST, "/\(path(id))/receipts", 204, as: alice, json: ["type": "read"])
            try await api.call(.POST, "/\(path(id))/receipts", 422, as: alice, json: ["type": "sent"])
            try await api.call(.DELETE, "/\(path(id))", 204, as: alice)
            try await api.call(.GET, "/\(path(id))", 404, as: alice)
            try await api.call(.GET, "/announcements/\(UUID().lowercased)", 404, as: alice)
        }
    }
}
