import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import NIOHTTP1
import Testing

/// The Server API acting as a user, its rich content and its delayed sends, against the document.
extension OpenAPIConformanceTests {
    @Test("The Server API's sends as a user, rich content and delayed sends answer as documented")
    func serverSendsContentAndSchedules() async throws {
        try await Self.withDocument { api in
            _ = try await api.user("alice")
            let (server, bearer, app) = try await api.backend()
            let conversation = try await server.conversation(["alice", "bob"])
            let conversationPath = "\(app)/conversations/\(bareUUID(conversation))"
            let text: JSONValue = [["mime_type": "text/plain", "body": "Hello"]]

            // Acting as a user.
            let asAlice = "\(app)/users/alice/conversations/\(bareUUID(conversation))/messages"
            let sent = try await api.call(.POST, asAlice, 201, headers: bearer, json: ["parts": text])
            let message = try #require(sent.json?["id"]?.stringValue)
            try await api.call(.GET, "\(app)/users/bob/messages/\(bareUUID(message))", 200, headers: bearer)
            try await api.call(.GET, "\(app)/users/nobody/messages/\(bareUUID(message))", 404, headers: bearer)
            try await api.call(.POST, asAlice, 422, headers: bearer, json: ["sender_id": "alice", "parts": text])
            try await api.call(.POST, asAlice, 400, headers: bearer + [("If-None-Match", "*")], json: ["parts": text])
            try await api.call(
                .POST, "\(app)/users/nobody/conversations/\(bareUUID(conversation))/messages", 404, headers: bearer,
                json: ["parts": text])
            try await api.call(.POST, asAlice, 401, json: ["parts": text])

            // A batch: its messages in order, or one refused for all.
            let batch: JSONValue = [
                ["sender_id": "alice", "parts": text], ["sender": ["name": "Bot"], "parts": text],
            ]
            let batchSent = try await api.call(.POST, "\(conversationPath)/messages", 201, headers: bearer, json: batch)
            #expect(batchSent.json?.arrayValue?.count == 2)
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, headers: bearer, json: [["sender_id": "alice", "parts": text], [:]])
            try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer, json: ["sender_id": "bob", "parts": text])

            // Delayed sends, through either route.
            let schedule: JSONValue = ["delay_in_seconds": 2, "typing_indicator_in_seconds": 1]
            try await api.call(.POST, asAlice, 202, headers: bearer, json: ["parts": text, "schedule": schedule])
            let bot = try await api.call(
                .POST, "\(conversationPath)/messages", 202, headers: bearer,
                json: ["sender": ["name": "Bot"], "parts": text, "schedule": ["delay_in_seconds": 1]])
            #expect(bot.json?["typing_indicator_at"] == .null)
            try await api.call(
                .POST, "\(conversationPath)/messages", 422, headers: bearer,
                json: ["sender": ["name": "Bot"], "parts": text, "schedule": ["delay_in_seconds": 0]])
            try await api.call(
                .POST, asAlice, 422, headers: bearer, json: ["parts": text, "schedule": ["typing_indicator_in_seconds": 1]])

            // Rich content of the conversation.
            let upload = [("Upload-Content-Type", "application/x-test"), ("Upload-Content-Length", "5000")]
            let slot = try await api.call(.POST, "\(conversationPath)/content", 201, headers: bearer + upload)
            let content = try #require(slot.json?["id"]?.stringValue)
            let contentPath = "\(conversationPath)/content/\(bareUUID(content))"
            try await api.call(.GET, contentPath, 404, headers: bearer)
            try await api.call(.POST, "\(conversationPath)/content", 422, headers: bearer + [("Upload-Content-Length", "5000")])
            try await api.call(
                .POST, "\(conversationPath)/content", 413,
                headers: bearer + [("Upload-Content-Type", "text/plain"), ("Upload-Content-Length", "99999999999")])
            try await api.call(.POST, "\(app)/conversations/\(UUID().lowercased)/content", 404, headers: bearer + upload)
            try await api.call(.POST, "\(conversationPath)/content", 401, headers: upload)
            let uploadPath = try api.localPath(try #require(slot.json?["upload_url"]?.stringValue))
            let payload = ByteBuffer(repeating: 7, count: 5000)
            try await api.call(.PUT, uploadPath, 200, body: payload, contentType: "application/x-test", accept: nil)
            try await api.call(.GET, contentPath, 200, headers: bearer)
            let part: JSONValue = [["mime_type": "application/x-test", "content": ["id": .string(content), "size": 5000]]]
            try await api.call(
                .POST, "\(conversationPath)/messages", 201, headers: bearer, json: ["sender_id": "bob", "parts": part])
        }
    }
}
