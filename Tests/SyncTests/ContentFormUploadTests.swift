import AsyncHTTPClient
import Foundation
import LayerModels
import LayerTesting
import NIOCore
import Testing

/// `POST` of a `multipart/form-data` body to a signed upload URL, as a form or a storage client
/// uploads a file: streamed, with the limits and checks of `PUT`, answered as Cloud Storage does.
@Suite("Rich content uploaded as a form")
struct ContentFormUploadTests {
    static let boundary = "----layerline-test-7MA4YWxkTrZu0gW"

    /// A form with a text field, the file, and another field after it.
    static func form(_ file: [UInt8], name: String = "file", filename: String? = "photo.png", boundary: String = boundary)
        -> [UInt8]
    {
        let disposition = "form-data; name=\"\(name)\"" + (filename.map { "; filename=\"\($0)\"" } ?? "")
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nuploads/photo.png\r\n".utf8)
        body += Array("--\(boundary)\r\nContent-Disposition: \(disposition)\r\nContent-Type: image/png\r\n\r\n".utf8)
        body += file
        body += Array(
            "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"acl\"\r\n\r\nprivate\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    /// `POST`s `body` to a signed URL, whole or in small pieces of unannounced total length.
    static func post(
        _ body: [UInt8], to url: String, client: TestClient, contentType: String = "multipart/form-data; boundary=\(boundary)",
        pieces: Int? = nil
    ) async throws -> TestResponse {
        var request = HTTPClientRequest(url: client.baseURL + relative(url))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        if let pieces {
            let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
            for start in stride(from: 0, to: body.count, by: pieces) {
                continuation.yield(ByteBuffer(bytes: body[start..<min(start + pieces, body.count)]))
            }
            continuation.finish()
            request.body = .stream(stream, length: .unknown)
        } else {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        return try await client.send(request, timeout: .seconds(60))
    }

    @Test("A form's file field is stored, answered as a Cloud Storage object, and sent like any content")
    func formUpload() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            // The bytes hold what looks like a boundary's start, to be read past as data. The byte after
            // it is fixed: a random one completes the boundary once in 256 runs.
            let payload =
                randomBytes(150_000) + Array("\r\n--\(Self.boundary.dropLast())!".utf8) + randomBytes(1000)
            for pieces in [nil, 777] {
                let slot = try await alice.createContent(type: "image/png", length: "\(payload.count)")
                let id = try #require(slot.json?["id"]?.stringValue)
                let url = try #require(slot.json?["upload_url"]?.stringValue)
                let stored = try await Self.post(Self.form(payload), to: url, client: harness.client, pieces: pieces)
                #expect(stored.status == 200, "\(stored.text)")
                let object = try #require(stored.json)
                #expect(object["kind"] == "storage#object")
                #expect(object["name"]?.stringValue == bareUUID(id))
                #expect(object["contentType"] == "image/png")
                #expect(object["size"]?.stringValue == "\(payload.count)")
                let download = try await harness.client.download(try #require(object["mediaLink"]?.stringValue))
                #expect(Array(buffer: download.body) == payload)

                let sent = try await alice.post(
                    "/\(path(conversation))/messages",
                    [
                        "parts": [
                            ["mime_type": "image/png", "content": ["id": .string(id), "size": .number(Double(payload.count))]]
                        ]
                    ])
                #expect(sent.status == 201)
                let message = try #require(sent.json?["id"]?.stringValue)
                let part = try await bob.get("/\(path(message))").json?["parts"]?.arrayValue?.first
                let link = try #require(part?["content"]?["download_url"]?.stringValue)
                #expect(Array(buffer: try await harness.client.download(link).body) == payload)
                // A slot takes one upload, by either method.
                #expect(try await Self.post(Self.form(payload), to: url, client: harness.client).status == 422)
                #expect(try await harness.client.upload(to: url, payload).status == 422)
            }
        }
    }

    @Test("A form that is not well-formed, has no file or two, or is too large is refused, and nothing is kept")
    func badForms() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let payload = randomBytes(5000)
            let slot = try await alice.createContent(type: "image/png", length: "\(payload.count)")
            let id = try #require(slot.json?["id"]?.stringValue)
            let url = try #require(slot.json?["upload_url"]?.stringValue)
            let form = Self.form(payload)
            let twoFiles =
                Array(form.dropLast("--\r\n".utf8.count))
                + Array(
                    "\r\nContent-Disposition: form-data; name=\"b\"; filename=\"b\"\r\n\r\nx\r\n--\(Self.boundary)--\r\n".utf8)
            let cases: [(body: [UInt8], contentType: String, status: Int, what: String)] = [
                (form, "application/octet-stream", 400, "not multipart"),
                (form, "multipart/form-data", 400, "no boundary"),
                (Array(form.prefix(form.count - 200)), "multipart/form-data; boundary=\(Self.boundary)", 400, "cut short"),
                (
                    Self.form(payload, name: "other", filename: nil), "multipart/form-data; boundary=\(Self.boundary)", 400,
                    "no file"
                ),
                (twoFiles, "multipart/form-data; boundary=\(Self.boundary)", 400, "two files"),
                (
                    Array("--\(Self.boundary)\r\nbroken header\r\n\r\n".utf8) + payload,
                    "multipart/form-data; boundary=\(Self.boundary)", 400, "malformed"
                ),
                (Self.form(randomBytes(4999)), "multipart/form-data; boundary=\(Self.boundary)", 422, "a byte short"),
                (Self.form(randomBytes(5001)), "multipart/form-data; boundary=\(Self.boundary)", 413, "a byte over"),
                (
                    Self.form(payload) + randomBytes(70_000), "multipart/form-data; boundary=\(Self.boundary)", 413,
                    "too much besides"
                ),
            ]
            for (body, contentType, status, what) in cases {
                let refused = try await Self.post(body, to: url, client: harness.client, contentType: contentType, pieces: 1000)
                #expect(refused.status == status, "\(what): \(refused.text)")
                #expect(refused.json?["code"] != nil, "\(what): \(refused.text)")
                let stored = try await harness.storedChunks(try #require(UUID(uuidString: bareUUID(id))))
                #expect(stored.count == 0 && stored.uploaded == false, "\(what)")
            }
            let forged = url.replacingOccurrences(of: "signature=", with: "signature=x")
            #expect(try await Self.post(form, to: forged, client: harness.client).status == 403)
            // After all that, the slot still takes its upload.
            #expect(try await Self.post(form, to: url, client: harness.client).status == 200)
        }
    }
}
