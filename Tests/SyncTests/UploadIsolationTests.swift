import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import Testing

@testable import LayerSync

/// An upload whose client sends a first byte and then nothing until `finish` (or `abandon`).
private struct StalledUpload: Sendable {
    let response: Task<TestResponse, any Error>
    private let continuation: AsyncStream<ByteBuffer>.Continuation

    init(client: TestClient, url: String, first: [UInt8]) {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        continuation.yield(ByteBuffer(bytes: first))
        self.continuation = continuation
        response = Task { try await client.upload(to: url, body: .stream(stream, length: .unknown)) }
    }

    /// Sends the rest and ends the body.
    func finish(_ rest: [UInt8]) async throws -> TestResponse {
        continuation.yield(ByteBuffer(bytes: rest))
        continuation.finish()
        return try await response.value
    }

    func abandon() {
        response.cancel()
        continuation.finish()
    }
}

extension UserClient {
    /// A new upload slot of `length` bytes; its upload URL.
    fileprivate func slot(length: Int) async throws -> String {
        let created = try await createContent(type: "application/octet-stream", length: "\(length)")
        guard created.status == 201, let url = created.json?["upload_url"]?.stringValue else {
            throw FixtureError("POST /content answered \(created.status): \(created.text)")
        }
        return url
    }
}

@Suite("Uploads cannot starve the service")
struct UploadIsolationTests {
    @Test("Uploads stalled mid-body hold no database connection: other users keep signing in, sending and reading")
    func stalledUploadsDoNotStarveOthers() async throws {
        // Ten stalled uploads against a pool of eight connections.
        var database = try await TestDatabase.settings()
        database.maxConnections = 8
        var server = ServerSettings(database: database)
        server.readTimeout = .seconds(300)  // a loaded machine must not cut the stalled uploads short
        try await SyncHarness.run(server: server) { harness in
            // The stalled uploads come through a client of their own: the shared one opens at most
            // eight connections to a host, and would queue the other users' requests behind them.
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 32
            let uploadHTTP = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let uploads = TestClient(baseURL: harness.client.baseURL, http: uploadHTTP)
            // A client that is not shut down traps when it is freed: shut it down however the test ends.
            do {
                try await serveBesideStalledUploads(harness, uploads)
            } catch {
                try? await uploadHTTP.shutdown()
                throw error
            }
            try await uploadHTTP.shutdown()
        }
    }

    private func serveBesideStalledUploads(_ harness: SyncHarness, _ uploads: TestClient) async throws {
        var stalled: [StalledUpload] = []
        for index in 0..<10 {
            let uploader = try await harness.user("uploader\(index / 2)")
            stalled.append(StalledUpload(client: uploads, url: try await uploader.slot(length: 1000), first: [1]))
        }
        defer { for upload in stalled { upload.abandon() } }
        try await Task.sleep(for: .milliseconds(500))  // every upload has reached the server

        // `user` asks for a nonce and opens a session; then a conversation, a message, a read.
        let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
        let sent = try await alice.send("still served", to: conversation)
        let id = try #require(sent["id"]?.stringValue)
        #expect(try await bob.get("/\(path(id))").status == 200)
        #expect(try await bob.get("/conversations").status == 200)
        for upload in stalled { #expect(try await upload.finish(Array(repeating: 2, count: 999)).status == 200) }
    }

    @Test("A user has a few uploads in progress at a time; the next is 429 with Retry-After until one ends")
    func uploadSlotsPerUser() async throws {
        var settings = SyncSettings()
        settings.uploadsPerUser = 2
        try await SyncHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let first = StalledUpload(client: harness.client, url: try await alice.slot(length: 10), first: [1])
            let second = StalledUpload(client: harness.client, url: try await alice.slot(length: 10), first: [1])
            defer { second.abandon() }
            try await Task.sleep(for: .milliseconds(500))
            let thirdURL = try await alice.slot(length: 10)
            let refused = try await harness.client.upload(to: thirdURL, Array(repeating: 3, count: 10))
            #expect(refused.status == 429)
            #expect(refused.errorID == "rate_limit_exceeded")
            #expect(refused.headers.first(name: "Retry-After") != nil)
            // Another user is not affected.
            #expect(
                try await harness.client.upload(to: try await bob.slot(length: 10), Array(repeating: 4, count: 10)).status == 200)

            #expect(try await first.finish(Array(repeating: 1, count: 9)).status == 200)
            #expect(try await harness.client.upload(to: thirdURL, Array(repeating: 3, count: 10)).status == 200)
        }
    }

    @Test("An upload whose client stops sending is cut at the read timeout, and the slot can be uploaded again")
    func stalledUploadIsCut() async throws {
        var server = ServerSettings()
        server.readTimeout = .seconds(2)
        try await SyncHarness.run(server: server) { harness in
            let alice = try await harness.user("alice")
            let url = try await alice.slot(length: 100)
            let stalled = StalledUpload(client: harness.client, url: url, first: [1, 2, 3])
            defer { stalled.abandon() }
            // The server closes the connection: the client sees an error or an error status.
            let outcome = try? await stalled.response.value
            #expect(outcome.map { $0.status >= 400 } ?? true, "a stalled upload was accepted: \(outcome?.status ?? 0)")
            let payload = randomBytes(100)
            let again = try await harness.client.upload(to: url, payload)
            #expect(again.status == 200, "\(again.text)")
        }
    }

    @Test("Content is limited per user: a slot that would pass the quota is 413 naming it, and nothing is created")
    func contentQuota() async throws {
        var settings = SyncSettings()
        settings.contentQuotaBytes = 1000
        try await SyncHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            _ = try await alice.uploadContent(randomBytes(600), type: "image/png")
            let over = try await alice.createContent(type: "image/png", length: "500")
            #expect(over.status == 413)
            #expect(over.errorID == "request_too_large")
            #expect(over.errorProperty == "Upload-Content-Length")
            #expect(over.json?["data"]?["quota_bytes"]?.intValue == 1000)
            #expect(over.json?["data"]?["used_bytes"]?.intValue == 600)
            // An open slot counts with its declared size.
            #expect(try await alice.createContent(type: "image/png", length: "300").status == 201)
            #expect(try await alice.createContent(type: "image/png", length: "200").status == 413)
            #expect(try await alice.createContent(type: "image/png", length: "100").status == 201)
            // Another user has a quota of their own.
            #expect(try await harness.user("bob").createContent(type: "image/png", length: "1000").status == 201)
        }
    }

    @Test("Content no message or announcement refers to is collected; content a standing message refers to stays")
    func garbageCollection() async throws {
        // A database of its own: with no grace period, collection takes the empty slots of every
        // test that shares the database.
        let server = ServerSettings(database: try await TestDatabase.isolated())
        try await SyncHarness.run(server: server) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let kept = try await alice.uploadContent(randomBytes(50), type: "image/png")
            let orphan = try await alice.uploadContent(randomBytes(50), type: "image/png")
            let ofDeleted = try await alice.uploadContent(randomBytes(50), type: "image/png")
            let emptySlot = try #require(try await alice.createContent(type: "image/png", length: "50").json?["id"]?.stringValue)
            for content in [kept, ofDeleted] {
                let part: JSONValue = ["mime_type": "image/png", "content": ["id": .string(content), "size": 50]]
                let message = try await alice.post("/\(path(conversation))/messages", ["parts": [part]])
                #expect(message.status == 201, "\(message.text)")
                if content == ofDeleted {
                    let id = try #require(message.json?["id"]?.stringValue)
                    #expect(try await alice.delete("/\(path(id))?mode=all_participants").status == 204)
                }
            }
            let repository = ContentRepository(postgres: harness.fixture.server.postgres)
            // Within the grace period nothing goes.
            #expect(try await repository.collectGarbage(grace: .seconds(3600), logger: .test) == 0)
            let removed = try await repository.collectGarbage(grace: .zero, logger: .test)
            #expect(removed >= 3)
            for content in [orphan, ofDeleted, emptySlot] {
                let uuid = try #require(LayerID(parsing: content, as: .content)?.uuid)
                #expect(try await harness.storedChunks(uuid).count == 0, "\(content) was collected")
                #expect(try await alice.get("/content/\(uuid.lowercased)").status == 404)
            }
            let keptID = try #require(LayerID(parsing: kept, as: .content)?.uuid)
            #expect(try await bob.get("/content/\(keptID.lowercased)").status == 200)
        }
    }
}

@Suite("Metadata size")
struct MetadataSizeTests {
    @Test(
        "Shared and private metadata are limited in all: a create or patch that passes it is 413 naming it, and nothing changes")
    func metadataLimit() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let big = String(repeating: "x", count: 40 * 1024)
            let tooBig = try await alice.post(
                "/conversations",
                ["participants": ["bob", "carol"], "distinct": false, "metadata": ["a": .string(big), "b": .string(big)]])
            #expect(tooBig.status == 413, "\(tooBig.text)")
            #expect(tooBig.errorID == "request_too_large")  // the body limit of the route covers a create

            let first = try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "metadata.a", "value": .string(big)]])
            #expect(first.status == 204, "\(first.text)")
            let second = try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "metadata.b", "value": .string(big)]])
            #expect(second.status == 413)
            #expect(second.errorProperty == "metadata")
            let stored = try await bob.get("/\(path(conversation))").json?["metadata"]
            #expect(stored?["a"]?.stringValue == big)
            #expect(stored?["b"] == nil)

            let own = try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "private_metadata.a", "value": .string(big)]])
            #expect(own.status == 204, "\(own.text)")
            let over = try await alice.patch(
                "/\(path(conversation))", [["operation": "set", "property": "private_metadata.b", "value": .string(big)]])
            #expect(over.status == 413)
            #expect(over.errorProperty == "private_metadata")
        }
    }
}
