import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import PostgresNIO
import Testing

@testable import LayerSync

@Suite("Rich content")
struct ContentTests {
    @Test("Several megabytes go up through the signed URL and come back byte for byte")
    func uploadAndDownload() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let payload = randomBytes(3 * 1024 * 1024 + 17)
            let created = try await alice.createContent(type: "video/mp4", length: "\(payload.count)")
            #expect(created.status == 201)
            let slot = try #require(created.json)
            let id = try #require(slot["id"]?.stringValue)
            let uuid = try #require(LayerID(parsing: id, as: .content)?.uuid)
            #expect(created.headers.first(name: "Location") == "/content/\(uuid.lowercased)")
            #expect(slot["size"]?.intValue == payload.count)
            #expect(slot["download_url"] == .null)
            #expect(slot["expiration"] == .null)
            #expect(slot["refresh_url"]?.stringValue?.hasSuffix("/content/\(uuid.lowercased)") == true)
            let uploadURL = try #require(slot["upload_url"]?.stringValue)
            #expect(uploadURL.contains("/content/\(uuid.lowercased)/upload?expires="))

            // Not there until uploaded, not even for its owner.
            let early = try await alice.get("/content/\(uuid.lowercased)")
            #expect(early.status == 404)
            #expect(early.errorID == "not_found")

            // Streamed in pieces of unknown total length, without an Accept header.
            let uploaded = try await harness.client.upload(to: uploadURL, payload, streamed: true)
            #expect(uploaded.status == 200)
            #expect(uploaded.json?["id"]?.stringValue == id)
            #expect(uploaded.json?["size"]?.intValue == payload.count)
            #expect(uploaded.json?["upload_url"] == .null)
            let firstLink = try #require(uploaded.json?["download_url"]?.stringValue)

            let stored = try await harness.storedChunks(uuid)
            #expect(stored.count == (payload.count + ContentRepository.contentChunkSize - 1) / ContentRepository.contentChunkSize)
            #expect(stored.largest == ContentRepository.contentChunkSize)
            #expect(stored.total == payload.count)

            let fetched = try await alice.get("/content/\(uuid.lowercased)")
            #expect(fetched.status == 200)
            #expect(fetched.json?["size"]?.intValue == payload.count)
            #expect(fetched.json?["upload_url"] == .null)
            #expect(fetched.json?["expiration"]?.stringValue != nil)
            let link = try #require(fetched.json?["download_url"]?.stringValue)

            let head = try await harness.client.request(.HEAD, relative(link), accept: nil)
            #expect(head.status == 200)
            #expect(head.headers.first(name: "Content-Length") == "\(payload.count)")
            #expect(head.body.readableBytes == 0)

            for url in [link, firstLink] {
                let download = try await harness.client.download(url)
                #expect(download.status == 200)
                #expect(download.headers.first(name: "Content-Type") == "video/mp4")
                #expect(download.headers.first(name: "Content-Length") == "\(payload.count)")
                #expect(download.body.readableBytes == payload.count)
                #expect(Array(buffer: download.body) == payload)
            }
        }
    }

    @Test("A part takes the size its content really has, whatever size it declared")
    func declaredSizeGivesWay() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            // A text over 2 KB with one accented letter, its size declared as the Web SDKs count
            // it: in JavaScript characters (3,000), where UTF-8 takes 3,001 bytes.
            let text = "é" + String(repeating: "a", count: 2999)
            let bytes = Array(text.utf8)
            #expect(bytes.count == 3001)
            let content = try await alice.uploadContent(bytes, type: "text/plain")
            let sent = try await alice.post(
                "/\(path(conversation))/messages",
                ["parts": [["mime_type": "text/plain", "content": ["id": .string(content), "size": 3000]]]])
            #expect(sent.status == 201, "\(sent.text)")
            #expect(sent.json?["parts"]?.arrayValue?.first?["content"]?["size"] == 3001)
            let message = try #require(sent.json?["id"]?.stringValue)
            let seen = try await bob.get("/\(path(message))")
            #expect(seen.json?["parts"]?.arrayValue?.first?["content"]?["size"] == 3001)
            let synced = try await bob.sync(anchor: 0)
            let operation = synced["operations"]?.arrayValue?.first { $0["message_id"]?.stringValue == message }
            #expect(operation?["message"]?["parts"]?.arrayValue?.first?["content"]?["size"] == 3001)
            let link = try #require(seen.json?["parts"]?.arrayValue?.first?["content"]?["download_url"]?.stringValue)
            #expect(Array(buffer: try await harness.client.download(link).body) == bytes)
        }
    }

    @Test("A content part reaches another participant, who downloads it; strangers cannot see it")
    func contentPart() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let payload = randomBytes(40_000)
            let content = try await alice.uploadContent(payload, type: "image/png")
            let conversation = try await alice.conversation(with: ["bob"])

            let sent = try await alice.post(
                "/\(path(conversation))/messages",
                [
                    "parts": [
                        ["mime_type": "text/plain", "body": "a picture"],
                        ["mime_type": "image/png", "content": ["id": .string(content), "size": 40_000]],
                    ]
                ])
            #expect(sent.status == 201)
            let messageID = try #require(sent.json?["id"]?.stringValue)
            let sentPart = sent.json?["parts"]?.arrayValue?.first { $0["mime_type"] == "image/png" }
            #expect(sentPart?["body"] == .null)
            #expect(sentPart?["content"]?["id"]?.stringValue == content)
            #expect(sentPart?["content"]?["size"]?.intValue == 40_000)

            let seen = try await bob.get("/\(path(messageID))")
            #expect(seen.status == 200)
            let part = try #require(seen.json?["parts"]?.arrayValue?.first { $0["mime_type"] == "image/png" })
            #expect(part["content"]?["id"]?.stringValue == content)
            #expect(part["content"]?["expiration"]?.stringValue != nil)
            let link = try #require(part["content"]?["download_url"]?.stringValue)
            let download = try await harness.client.download(link)
            #expect(download.status == 200)
            #expect(download.headers.first(name: "Content-Type") == "image/png")
            #expect(Array(buffer: download.body) == payload)

            let bobsView = try await bob.get("/\(path(content))")
            #expect(bobsView.status == 200)
            #expect(bobsView.json?["download_url"]?.stringValue != nil)

            let stranger = try await carol.get("/\(path(content))")
            #expect(stranger.status == 404)
            #expect(stranger.errorID == "not_found")

            // Once the message is gone for everybody, only the owner still sees the content.
            #expect(try await alice.delete("/\(path(messageID))?mode=all_participants").status == 204)
            #expect(try await bob.get("/\(path(content))").status == 404)
            #expect(try await alice.get("/\(path(content))").status == 200)
        }
    }

    @Test("Tampered, swapped and expired signatures are refused with 403")
    func signatures() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let payload = randomBytes(5000)
            let slot = try #require(try await alice.createContent(type: "application/pdf", length: "5000").json)
            let uploadURL = try #require(slot["upload_url"]?.stringValue)
            let uuid = try #require(slot["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: .content)?.uuid })

            let links = ContentLinks(secret: SyncSettings().contentLinkSecret)
            let urls = URLBuilder(base: harness.fixture.server.baseURL)
            let validDownload = links.url(.download, content: uuid, urls: urls).url
            let expiredUpload = links.url(.upload, content: uuid, urls: urls, now: Date().addingTimeInterval(-7200)).url
            for refused in [
                try await harness.client.upload(to: expiredUpload, payload),
                try await harness.client.upload(to: tampered(uploadURL), payload),
                try await harness.client.upload(
                    to: validDownload.replacingOccurrences(of: "/download?", with: "/upload?"), payload),
                try await harness.client.upload(to: String(uploadURL.prefix { $0 != "?" }), payload),
            ] {
                #expect(refused.status == 403)
                #expect(refused.errorID == "access_denied")
            }
            #expect(try await harness.storedChunks(uuid).count == 0)

            let uploaded = try await harness.client.upload(to: uploadURL, payload)
            #expect(uploaded.status == 200)
            let link = try #require(uploaded.json?["download_url"]?.stringValue)
            #expect(try await harness.client.download(link).status == 200)

            let other = try await alice.uploadContent(randomBytes(10), type: "text/plain")
            let otherUUID = try #require(LayerID(parsing: other, as: .content)?.uuid)
            let expiredDownload = links.url(.download, content: uuid, urls: urls, now: Date().addingTimeInterval(-3601)).url
            for refused in [
                try await harness.client.download(expiredDownload),
                try await harness.client.download(tampered(link)),
                try await harness.client.download(link.replacingOccurrences(of: uuid.lowercased, with: otherUUID.lowercased)),
                try await harness.client.download(uploadURL.replacingOccurrences(of: "/upload?", with: "/download?")),
                try await harness.client.download(link.replacingOccurrences(of: "expires=", with: "expires=1")),
            ] {
                #expect(refused.status == 403)
                #expect(refused.errorID == "access_denied")
                #expect(refused.body.readableBytes < 1000)
            }
            let fresh = links.url(.download, content: uuid, urls: urls).url
            #expect(Array(buffer: try await harness.client.download(fresh).body) == payload)
            // Links have a key of their own: one signed with an internal token (their key once) is refused.
            for token in harness.fixture.internalTokens.byService.values {
                let signed = ContentLinks(secret: token).url(.download, content: uuid, urls: urls).url
                #expect(try await harness.client.download(signed).status == 403)
            }
        }
    }

    @Test("An upload of the wrong length keeps nothing; a second upload is refused")
    func wrongLengths() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let declared = 600_000
            let slot = try #require(try await alice.createContent(type: "audio/ogg", length: "\(declared)").json)
            let uploadURL = try #require(slot["upload_url"]?.stringValue)
            let uuid = try #require(slot["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: .content)?.uuid })

            for (size, streamed, status, errorID) in [
                (declared - 1, true, 422, "invalid_property"), (declared - 1, false, 422, "invalid_property"),
                (declared + 1, true, 413, "request_too_large"), (declared + 1, false, 413, "request_too_large"),
                (0, true, 422, "invalid_property"),
            ] {
                let answer = try await harness.client.upload(to: uploadURL, randomBytes(size), streamed: streamed)
                #expect(answer.status == status, "\(size) bytes, streamed: \(streamed)")
                #expect(answer.errorID == errorID)
                #expect(answer.errorProperty == "Upload-Content-Length")
                let stored = try await harness.storedChunks(uuid)
                #expect(stored.count == 0)
                #expect(stored.uploaded == false)
                #expect(try await alice.get("/content/\(uuid.lowercased)").status == 404)
            }

            let payload = randomBytes(declared)
            let uploaded = try await harness.client.upload(to: uploadURL, payload)
            #expect(uploaded.status == 200)
            let again = try await harness.client.upload(to: uploadURL, randomBytes(declared), streamed: true)
            #expect(again.status == 422)
            #expect(again.errorID == "invalid_operation")
            let link = try #require(try await alice.get("/content/\(uuid.lowercased)").json?["download_url"]?.stringValue)
            #expect(Array(buffer: try await harness.client.download(link).body) == payload)
            #expect(try await harness.storedChunks(uuid).total == declared)
        }
    }

    @Test("Two uploads racing for one slot: exactly one is stored, the other is refused")
    func concurrentUploads() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let slot = try #require(try await alice.createContent(type: "image/jpeg", length: "300000").json)
            let uploadURL = try #require(slot["upload_url"]?.stringValue)
            let uuid = try #require(slot["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: .content)?.uuid })
            let first = randomBytes(300_000)
            let second = randomBytes(300_000)
            let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            async let slow = harness.client.upload(to: uploadURL, body: .stream(stream, length: .unknown))
            continuation.yield(ByteBuffer(bytes: first[..<1000]))
            try await Task.sleep(for: .milliseconds(300))
            let fast = try await harness.client.upload(to: uploadURL, second)
            continuation.yield(ByteBuffer(bytes: first[1000...]))
            continuation.finish()
            let answers = [try await slow, fast]
            #expect(answers.map(\.status).sorted() == [200, 422])
            #expect(answers.first { $0.status == 422 }?.errorID == "invalid_operation")
            let winner = answers[0].status == 200 ? first : second
            let link = try #require(try await alice.get("/content/\(uuid.lowercased)").json?["download_url"]?.stringValue)
            #expect(Array(buffer: try await harness.client.download(link).body) == winner)
        }
    }

    @Test("A declared size over the limit is refused with 413")
    func sizeLimit() async throws {
        try await SyncHarness.run(settings: SyncSettings(maxContentBytes: 1000)) { harness in
            let alice = try await harness.user("alice")
            let over = try await alice.createContent(type: "image/png", length: "1001")
            #expect(over.status == 413)
            #expect(over.errorID == "request_too_large")
            #expect(over.errorProperty == "Upload-Content-Length")
            let huge = try await alice.createContent(type: "image/png", length: "99999999999999999999")
            #expect(huge.status == 413)
            #expect(huge.errorProperty == "Upload-Content-Length")
            let limit = try await alice.createContent(type: "image/png", length: "1000")
            #expect(limit.status == 201)
        }
    }

    @Test("Missing or malformed upload headers are 422 naming the header")
    func headers() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let noType = try await alice.createContent(type: nil, length: "10")
            #expect(noType.status == 422)
            #expect(noType.errorID == "missing_property")
            #expect(noType.errorProperty == "Upload-Content-Type")
            let noLength = try await alice.createContent(type: "text/plain", length: nil)
            #expect(noLength.status == 422)
            #expect(noLength.errorID == "missing_property")
            #expect(noLength.errorProperty == "Upload-Content-Length")
            for type in ["image", "image/", "/png", "ima ge/png"] {
                let answer = try await alice.createContent(type: type, length: "10")
                #expect(answer.status == 422, "\(type)")
                #expect(answer.errorID == "invalid_property")
                #expect(answer.errorProperty == "Upload-Content-Type")
            }
            for length in ["0", "000", "-5", "abc", "1.5", "+10", "١٠"] {
                let answer = try await alice.createContent(type: "text/plain", length: length)
                #expect(answer.status == 422, "\(length)")
                #expect(answer.errorID == "invalid_property")
                #expect(answer.errorProperty == "Upload-Content-Length")
            }
            let badOrigin = try await alice.createContent(type: "text/plain", length: "10", origin: "not an origin")
            #expect(badOrigin.status == 422)
            #expect(badOrigin.errorProperty == "Upload-Origin")
            let withOrigin = try await alice.createContent(
                type: "text/plain; charset=utf-8", length: "10", origin: "https://chat.example.com")
            #expect(withOrigin.status == 201)

            let anonymous = try await harness.client.request(
                .POST, "/content", headers: [("Upload-Content-Type", "text/plain"), ("Upload-Content-Length", "10")])
            #expect(anonymous.status == 401)
        }
    }

    @Test("A content part must name uploaded content of the sender")
    func contentReferences() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let bobs = try await bob.uploadContent(randomBytes(3000), type: "image/png")
            let pending = try #require(try await alice.createContent(type: "image/png", length: "3000").json?["id"]?.stringValue)
            let unknown = LayerID(.content, UUID()).uri
            for (content, property) in [
                (bobs, "parts.0.content.id"), (pending, "parts.0.content.id"), (unknown, "parts.0.content.id"),
                ("layer:///messages/\(UUID().uuidString)", "parts.0.content.id"),
            ] {
                let answer = try await alice.post(
                    "/\(path(conversation))/messages",
                    ["parts": [["mime_type": "image/png", "content": ["id": .string(content), "size": 3000]]]])
                #expect(answer.status == 422, "\(content)")
                #expect(answer.errorID == "invalid_property")
                #expect(answer.errorProperty == property)
            }
            let list = try await bob.get("/\(path(conversation))/messages")
            #expect(list.headers.first(name: "Layer-Count") == "0")
            // Bob's content is Bob's to send.
            let own = try await bob.post(
                "/\(path(conversation))/messages",
                ["parts": [["mime_type": "image/png", "content": ["id": .string(bobs)]]]])
            #expect(own.status == 201)
            #expect(own.json?["parts"]?.arrayValue?.first?["content"]?["size"]?.intValue == 3000)
        }
    }

    @Test("A download is an attachment that browsers neither sniff nor run, whatever type it claims")
    func downloadsAreInertAttachments() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let page = Array("<script>alert(document.cookie)</script>".utf8)
            let id = try await alice.uploadContent(page, type: "text/html")
            let uuid = try #require(LayerID(parsing: id, as: .content)?.uuid)
            let fetched = try await alice.get("/content/\(uuid.lowercased)")
            let link = try #require(fetched.json?["download_url"]?.stringValue)
            let download = try await harness.client.download(link)
            #expect(download.status == 200)
            #expect(download.headers.first(name: "Content-Type") == "text/html")
            #expect(download.headers.first(name: "Content-Disposition") == "attachment")
            #expect(download.headers.first(name: "X-Content-Type-Options") == "nosniff")
            let policy = download.headers.first(name: "Content-Security-Policy") ?? ""
            #expect(policy.contains("sandbox") && policy.contains("default-src 'none'"), "\(policy)")
            #expect(Array(buffer: download.body) == page)
        }
    }
}
