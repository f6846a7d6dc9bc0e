import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import Testing

/// The Server API flows of the conformance suite: what an app's backend sends and gets back.
extension OpenAPIConformanceTests {
    @Test("The Server API's conversations and messages answer as documented")
    func serverConversationsAndMessages() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            _ = try await api.user("bob")
            let (server, bearer, app) = try await api.backend()

            let body: JSONValue = ["participants": ["layer:///identities/alice", "bob"], "metadata": ["topic": "Orders"]]
            let created = try await api.call(.POST, "\(app)/conversations", 201, headers: bearer, json: body)
            let conversation = try #require(created.json?["id"]?.stringValue)
            let uuid = try #require(LayerID(parsing: conversation, as: .conversations)).uuid.lowercased
            #expect(created.headers.first(name: "Location") == "\(app)/conversations/\(uuid)")
            try await api.call(.POST, "\(app)/conversations", 200, headers: bearer, json: body)
            let conflict = try await api.call(
                .POST, "\(app)/conversations", 409, headers: bearer,
                json: ["participants": ["alice", "bob"], "metadata": ["topic": "Other"]])
            api.expect(conflict.json?["data"], is: "SystemConversation")
            let tag = [("If-None-Match", "\"\(UUID().lowercased)\"")]
            let group: JSONValue = ["participants": ["alice", "bob"], "distinct": false]
            let tagged = try await api.call(.POST, "\(app)/conversations", 201, headers: bearer + tag, json: group)
            let retried = try await api.call(.POST, "\(app)/conversations", 201, headers: bearer + tag, json: group)
            #expect(tagged.json?["id"] == retried.json?["id"])
            try await api.call(.POST, "\(app)/conversations", 400, headers: bearer + [("If-None-Match", "*")], json: group)
            try await api.call(.POST, "\(app)/conversations", 422, headers: bearer, json: ["distinct": false])
            try await api.call(.POST, "\(app)/conversations", 422, headers: bearer, json: ["participants": ["bob"], "id": "x"])
            try await api.call(.POST, "\(app)/conversations", 401, json: body)
            try await api.call(
                .POST, "\(app)/conversations", 401, headers: [("Authorization", "Bearer \(server.token)x")], json: body)
            try await api.call(.POST, "\(app)/conversations", 406, headers: bearer, json: body, accept: nil)
            try await api.call(.POST, "/apps/not-an-app/conversations", 404, headers: bearer, json: body)

            let conversationPath = "\(app)/conversations/\(uuid)"
            let system = try await api.call(.GET, conversationPath, 200, headers: bearer)
            #expect(system.json?["unread_message_count"] == nil)
            try await api.call(.GET, "\(app)/conversations/\(UUID().lowercased)", 404, headers: bearer)
            let rename: JSONValue = [["operation": "set", "property": "metadata.topic", "value": "Refunds"]]
            try await api.patch(conversationPath, 204, headers: bearer, json: rename)
            try await api.call(
                .POST, conversationPath, 204, headers: bearer + [("X-HTTP-Method-Override", "PATCH")], json: rename,
                contentType: MediaType.layerPatch, documentedAs: "PATCH")
            try await api.call(.PATCH, conversationPath, 406, headers: bearer, json: rename)
            try await api.patch(
                conversationPath, 422, headers: bearer, json: [["operation": "set", "property": "colour", "value": "x"]])

            // Messages as a participant and as a system sender; de-duplicated by tag.
            let text: JSONValue = [["mime_type": "text/plain", "body": "Your order shipped"]]
            let asAlice = try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer,
                json: ["sender_id": "layer:///identities/alice", "parts": text])
            let message = try #require(asAlice.json?["id"]?.stringValue)
            let messageUUID = try #require(LayerID(parsing: message, as: .messages)).uuid.lowercased
            let bot = try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer,
                json: ["sender": ["name": "Order bot"], "parts": text, "notification": ["text": "Shipped"]])
            #expect(bot.json?["sender"]?["user_id"] == .null)
            #expect(bot.json?["sender"]?["name"] == "Order bot")
            let messageTag = [("If-None-Match", UUID().lowercased)]
            let first = try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer + messageTag,
                json: ["sender_id": "bob", "parts": text])
            let again = try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer + messageTag,
                json: ["sender_id": "bob", "parts": text])
            #expect(first.json?["id"] == again.json?["id"])
            try await api.call(.POST, "\(conversationPath)/messages", 422, headers: bearer, json: ["parts": text])
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, headers: bearer, json: ["sender_id": "carol", "parts": text])
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, headers: bearer,
                json: ["sender_id": "bob", "sender": ["name": "x"], "parts": text])
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, headers: bearer, json: ["sender_id": "bob", "id": "x", "parts": text])

            let messages = try await api.call(.GET, "\(conversationPath)/messages?page_size=2", 200, headers: bearer)
            #expect(messages.headers.first(name: "Layer-Count") == "3")
            try await api.call(.GET, "\(conversationPath)/messages/\(messageUUID)", 200, headers: bearer)
            let otherConversation = try #require(tagged.json?["id"]?.stringValue)
            try await api.call(
                .GET,
                "/\(path(otherConversation).replacingOccurrences(of: "conversations", with: "apps/\(server.appID)/conversations"))/messages/\(messageUUID)",
                404, headers: bearer)

            // One user's view, and acting as that user.
            let user = "\(app)/users/alice"
            let list = try await api.call(.GET, "\(user)/conversations?sort_by=last_message", 200, headers: bearer)
            #expect(list.headers.first(name: "Layer-Count") == "2")
            try await api.call(.GET, "\(user)/conversations?sort_by=colour", 422, headers: bearer)
            try await api.call(.GET, "\(app)/users/nobody/conversations", 404, headers: bearer)
            let view = try await api.call(.GET, "\(user)/conversations/\(uuid)", 200, headers: bearer)
            #expect(view.json?["unread_message_count"] == 2)
            try await api.call(.GET, "\(user)/conversations/\(uuid)/messages", 200, headers: bearer)
            try await api.call(.POST, "\(user)/conversations/\(uuid)/mark_all_read", 204, headers: bearer)
            try await api.call(.POST, "\(user)/conversations/\(uuid)/mark_all_read", 204, headers: bearer, json: ["position": 1])
            let bobUser = "\(app)/users/bob"
            try await api.call(.POST, "\(bobUser)/messages/\(messageUUID)/receipts", 204, headers: bearer, json: ["type": "read"])
            try await api.call(.POST, "\(bobUser)/messages/\(messageUUID)/receipts", 422, headers: bearer, json: ["type": "seen"])
            try await api.call(.DELETE, "\(bobUser)/messages/\(messageUUID)", 422, headers: bearer)
            try await api.call(.DELETE, "\(bobUser)/messages/\(messageUUID)?mode=all_participants", 403, headers: bearer)
            try await api.call(.DELETE, "\(bobUser)/messages/\(messageUUID)?mode=my_devices", 204, headers: bearer)
            let fromAlice = try await api.call(.GET, "/\(path(message))", 200, as: alice)
            #expect(fromAlice.json?["recipient_status"]?["layer:///identities/bob"] == "read")

            try await api.call(.DELETE, "\(conversationPath)/messages/\(messageUUID)", 204, headers: bearer)
            try await api.call(.DELETE, "\(conversationPath)/messages/\(messageUUID)", 404, headers: bearer)
            try await api.call(.DELETE, conversationPath, 204, headers: bearer)
            try await api.call(.DELETE, conversationPath, 204, headers: bearer)
            try await api.call(.GET, conversationPath, 404, headers: bearer)
        }
    }

    @Test("The Server API's identities and blocks answer as documented")
    func serverIdentitiesAndBlocks() async throws {
        try await Self.withDocument { api in
            // The sync service knows a user once they used it (or the app's backend named them).
            let alice = try await api.user("alice")
            try await api.call(.GET, "/conversations", 200, as: alice)
            let (_, bearer, app) = try await api.backend()
            let identity = "\(app)/users/helper%2Fbot/identity"

            let fields: JSONValue = [
                "display_name": "Helper", "identity_type": "bot", "first_name": "Help", "metadata": ["team": "support"],
            ]
            try await api.call(.POST, identity, 201, headers: bearer, json: fields)
            let taken = try await api.call(.POST, identity, 409, headers: bearer, json: fields)
            api.expect(taken.json?["data"], is: "Identity")
            try await api.call(.POST, "\(app)/users/nameless/identity", 422, headers: bearer, json: ["first_name": "No"])
            try await api.call(
                .POST, "\(app)/users/typed/identity", 422, headers: bearer, json: ["display_name": "T", "identity_type": "robot"])
            try await api.call(
                .POST, "\(app)/users/extra/identity", 422, headers: bearer, json: ["display_name": "T", "colour": "red"])
            let read = try await api.call(.GET, identity, 200, headers: bearer)
            #expect(read.json?["user_id"] == "helper/bot")
            #expect(read.json?["last_name"] == .null)
            try await api.call(.PUT, identity, 204, headers: bearer, json: ["display_name": "Helper 2"])
            try await api.call(.PUT, "\(app)/users/nobody/identity", 404, headers: bearer, json: ["display_name": "N"])
            let change: JSONValue = [
                ["operation": "set", "property": "last_name", "value": "Bot"],
                ["operation": "set", "property": "metadata.level", "value": "2"],
            ]
            try await api.patch(identity, 204, headers: bearer, json: change)
            try await api.patch(identity, 422, headers: bearer, json: [["operation": "set", "property": "colour", "value": "x"]])
            try await api.call(.PATCH, identity, 406, headers: bearer, json: change)
            let changed = try await api.call(.GET, identity, 200, headers: bearer)
            #expect(changed.json?["last_name"] == "Bot")
            #expect(changed.json?["first_name"] == .null)
            try await api.call(.DELETE, identity, 204, headers: bearer)
            try await api.call(.DELETE, identity, 404, headers: bearer)
            try await api.call(.GET, identity, 404, headers: bearer)
            try await api.call(.GET, identity, 401)

            let blocks = "\(app)/users/alice/blocks"
            try await api.call(.POST, blocks, 204, headers: bearer, json: ["user_id": "bob"])
            try await api.call(.POST, blocks, 204, headers: bearer, json: ["id": "layer:///identities/carol"])
            let blocked = try await api.call(.GET, blocks, 200, headers: bearer)
            #expect(Set(blocked.json?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []) == ["bob", "carol"])
            try await api.call(.POST, blocks, 422, headers: bearer, json: [:])
            try await api.call(.POST, blocks, 422, headers: bearer, json: ["user_id": "bob", "id": "layer:///identities/bob"])
            try await api.call(.POST, "\(app)/users/nobody/blocks", 404, headers: bearer, json: ["user_id": "bob"])
            try await api.call(.DELETE, "\(blocks)/bob", 204, headers: bearer)
            try await api.call(.DELETE, "\(blocks)/layer%3A%2F%2F%2Fidentities%2Fcarol", 204, headers: bearer)
            let none = try await api.call(.GET, blocks, 200, headers: bearer)
            #expect(none.json == [])
        }
    }
}
