import AsyncHTTPClient
import Foundation
import LayerModels
import LayerTesting
import NIOCore
import PostgresNIO

/// Rich content as a client moves it: a slot made through the API, then bytes to and from signed
/// URLs, which carry no session and no Layer `Accept` header.
extension UserClient {
    /// `POST /content` as this user, with the upload headers that are not nil.
    func createContent(type: String?, length: String?, origin: String? = nil) async throws -> TestResponse {
        var headers = auth
        if let type { headers.append(("Upload-Content-Type", type)) }
        if let length { headers.append(("Upload-Content-Length", length)) }
        if let origin { headers.append(("Upload-Origin", origin)) }
        return try await client.request(.POST, "/content", headers: headers)
    }

    /// Creates and uploads content as this user; returns its id, failing the test unless both work.
    func uploadContent(_ bytes: [UInt8], type: String) async throws -> String {
        let slot = try await createContent(type: type, length: "\(bytes.count)")
        guard slot.status == 201, let id = slot.json?["id"]?.stringValue, let url = slot.json?["upload_url"]?.stringValue else {
            throw FixtureError("POST /content answered \(slot.status): \(slot.text)")
        }
        let uploaded = try await client.upload(to: url, bytes)
        guard uploaded.status == 200 else { throw FixtureError("the upload answered \(uploaded.status): \(uploaded.text)") }
        return id
    }
}

extension TestClient {
    /// `PUT` of `bytes` to a signed URL, with a Content-Length or, `streamed`, in 64 KB pieces of
    /// unannounced total length.
    func upload(to url: String, _ bytes: [UInt8], streamed: Bool = false) async throws -> TestResponse {
        guard streamed else { return try await upload(to: url, body: .bytes(ByteBuffer(bytes: bytes))) }
        let pieces = stride(from: 0, to: bytes.count, by: 64 * 1024).map { start in
            ByteBuffer(bytes: bytes[start..<min(start + 64 * 1024, bytes.count)])
        }
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        for piece in pieces { continuation.yield(piece) }
        continuation.finish()
        return try await upload(to: url, body: .stream(stream, length: .unknown))
    }

    func upload(to url: String, body: HTTPClientRequest.Body) async throws -> TestResponse {
        var request = HTTPClientRequest(url: baseURL + relative(url))
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = body
        return try await send(request, timeout: .seconds(60))
    }

    /// `GET` of a signed URL, as a browser would: no session and no Layer `Accept` header.
    func download(_ url: String) async throws -> TestResponse {
        try await request(.GET, relative(url), accept: nil)
    }
}

extension SyncHarness {
    /// What the database holds of a content: its chunk rows and whether it counts as uploaded.
    func storedChunks(_ id: UUID) async throws -> (count: Int, largest: Int, total: Int, uploaded: Bool) {
        let rows = try await fixture.server.postgres.query(
            """
            SELECT count(k.ordinal), coalesce(max(length(k.data)), 0), coalesce(sum(length(k.data)), 0),
                bool_or(c.uploaded_at IS NOT NULL)
            FROM sync.content c LEFT JOIN sync.content_chunks k ON k.content_id = c.id
            WHERE c.id = \(id)
            """)
        for try await (count, largest, total, uploaded) in rows.decode((Int64, Int32, Int64, Bool?).self) {
            return (Int(count), Int(largest), Int(total), uploaded ?? false)
        }
        return (0, 0, 0, false)
    }
}

/// The path and query of an absolute URL.
func relative(_ url: String) -> String {
    guard let components = URLComponents(string: url) else { return url }
    return components.percentEncodedPath + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
}

/// `url` with one character of its signature changed.
func tampered(_ url: String) -> String {
    guard let range = url.range(of: "signature=") else { return url }
    var text = url
    let index = range.upperBound
    text.replaceSubrange(index...index, with: text[index] == "A" ? "B" : "A")
    return text
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var bytes = [UInt8]()
    bytes.reserveCapacity(count + 8)
    while bytes.count < count {
        withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
    }
    return Array(bytes.prefix(count))
}
