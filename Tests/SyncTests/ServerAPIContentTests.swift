import Foundation
import LayerModels
import LayerTesting
import NIOCore
import NIOHTTP1
import Testing

extension ServerClient {
    /// `POST /apps/<app>/conversations/<id>/content` with the upload headers that are not nil.
    func createContent(in conversation: String, type: String?, length: String?) async throws -> TestResponse {
        var headers: [(String, String)] = []
        if let type { headers.append(("Upload-Content-Type", type)) }
        if let length { headers.append(("Upload-Content-Length", length)) }
        return try await request(.POST, "/\(path(conversation))/content", headers: headers)
    }
}

/// Rich content through the Server API: a slot for a conversation, the upload to its signed URL
/// with no credentials, a message part referring to it, and refreshes.
extension ServerAPITests {
    @Test(
        "Rich content through the Server API: slot, upload, a part that refers to it, refresh; other conversations and apps cannot use it"
    )
    func richContent() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            let other = try await api.conversation(["alice", "bob"])
            let bytes = (0..<5000).map { UInt8($0 % 251) }

            let slot = try await api.createContent(in: id, type: "image/png", length: "\(bytes.count)")
            #expect(slot.status == 201)
            let content = try #require(slot.json?["id"]?.stringValue)
            let location = "/apps/\(harness.appID)/\(path(id))/content/\(bareUUID(content))"
            #expect(slot.headers.first(name: "Location") == location)
            #expect(slot.json?["size"] == .number(Double(bytes.count)))
            #expect(slot.json?["download_url"] == .null)
            #expect(slot.json?["refresh_url"]?.stringValue?.hasSuffix(location) == true)
            let uploadURL = try #require(slot.json?["upload_url"]?.stringValue)
            // Not uploaded yet: nothing to refresh.
            #expect(try await api.get("/\(path(id))/content/\(bareUUID(content))").status == 404)

            // The signed URL takes the bytes without a token.
            let uploaded = try await harness.client.upload(to: uploadURL, bytes)
            #expect(uploaded.status == 200)
            #expect(uploaded.json?["download_url"]?.stringValue != nil)

            let part: JSONValue = [
                "mime_type": "image/png", "content": ["id": .string(content), "size": .number(Double(bytes.count))],
            ]
            let sent = try await api.post("/\(path(id))/messages", ["sender": ["name": "Gallery"], "parts": [part]])
            #expect(sent.status == 201, "\(sent.text)")
            let download = try #require(sent.json?["parts"]?[0]?["content"]?["download_url"]?.stringValue)
            #expect(try await harness.client.download(download).body == ByteBuffer(bytes: bytes))
            // As a participant, and acting as one, the app uses it too.
            #expect(try await api.post("/\(path(id))/messages", ["sender_id": "alice", "parts": [part]]).status == 201)
            #expect(try await api.post("/users/bob/\(path(id))/messages", ["parts": [part]]).status == 201)

            let refreshed = try await api.get("/\(path(id))/content/\(bareUUID(content))")
            #expect(refreshed.status == 200)
            #expect(refreshed.json?["id"]?.stringValue == content)
            #expect(refreshed.json?["upload_url"] == .null)
            let fresh = try #require(refreshed.json?["download_url"]?.stringValue)
            #expect(try await harness.client.download(fresh).body == ByteBuffer(bytes: bytes))
            // A participant who received it refreshes it through the Client API.
            let bob = try await harness.user("bob")
            #expect(try await bob.get("/content/\(bareUUID(content))").status == 200)

            // Another conversation of the app, a user's own send and another app cannot use it.
            let elsewhere = try await api.post("/\(path(other))/messages", ["sender": ["name": "Gallery"], "parts": [part]])
            #expect(elsewhere.status == 422)
            #expect(elsewhere.errorProperty == "parts.0.content.id")
            #expect(try await api.get("/\(path(other))/content/\(bareUUID(content))").status == 404)
            let alice = try await harness.user("alice")
            #expect(try await alice.post("/\(path(id))/messages", ["parts": [part]]).errorProperty == "parts.0.content.id")
            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let otherAPI = ServerClient(
                appID: otherApp.id.lowercased, token: try await harness.fixture.serverAPIToken(app: otherApp),
                client: harness.client)
            let theirs = try await otherAPI.conversation(["alice", "bob"])
            let foreign = try await otherAPI.post("/\(path(theirs))/messages", ["sender": ["name": "Gallery"], "parts": [part]])
            #expect(foreign.status == 422)
            #expect(foreign.errorProperty == "parts.0.content.id")
            #expect(try await otherAPI.get("/\(path(theirs))/content/\(bareUUID(content))").status == 404)
            #expect(try await otherAPI.get("/\(path(id))/content/\(bareUUID(content))").status == 404)

            // The slot is checked as the Client API's.
            let untyped = try await api.createContent(in: id, type: nil, length: "10")
            #expect(untyped.status == 422)
            #expect(untyped.errorProperty == "Upload-Content-Type")
            #expect(try await api.createContent(in: id, type: "image/png", length: "0").errorProperty == "Upload-Content-Length")
            #expect(try await api.createContent(in: id, type: "image/png", length: "\(Int64.max)").status == 413)
            let nowhere = "layer:///conversations/\(UUID().lowercased)"
            #expect(try await api.createContent(in: nowhere, type: "image/png", length: "10").status == 404)
            #expect(try await otherAPI.createContent(in: id, type: "image/png", length: "10").status == 404)
            #expect(try await harness.client.request(.POST, "/apps/\(harness.appID)/\(path(id))/content").status == 401)
        }
    }
}
