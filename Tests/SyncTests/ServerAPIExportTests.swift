import CompressNIO
import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import PostgresNIO
import Testing
import _CryptoExtras

@Suite("Server API data exports")
struct ServerAPIExportTests {
    /// The customer's key pair (made from a shared test key: RSA keys are slow to make).
    static func keyPair() throws -> (private: _RSA.Encryption.PrivateKey, publicPEM: String) {
        let key = try _RSA.Encryption.PrivateKey(pemRepresentation: TestKeys.key(7).pemRepresentation)
        return (key, key.publicKey.pemRepresentation)
    }

    /// Polls the export's status URL until it is completed (or failed); returns the export.
    static func completed(
        _ export: JSONValue, api: ServerClient, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> JSONValue {
        let id = try #require(export["id"]?.stringValue, sourceLocation: sourceLocation)
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline {
            let status = try await api.get("/exports/\(bareUUID(id))/status")
            try #require(status.status == 200, "\(status.text)", sourceLocation: sourceLocation)
            let json = try #require(status.json, sourceLocation: sourceLocation)
            if ["completed", "failed"].contains(json["status"]?.stringValue) { return json }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw FixtureError("export \(id) did not complete")
    }

    /// Downloads a completed export and opens it as its owner would: the AES key unwrapped with
    /// the private key (RSA-OAEP, SHA-1), the archive decrypted (AES-256-CBC) and gunzipped into
    /// one JSON value per line.
    static func open(
        _ export: JSONValue, api: ServerClient, key: _RSA.Encryption.PrivateKey, harness: SyncHarness
    ) async throws -> [JSONValue] {
        let url = try #require(export["download_url"]?.stringValue)
        let path = try #require(url.hasPrefix(harness.client.baseURL) ? String(url.dropFirst(harness.client.baseURL.count)) : nil)
        let download = try await harness.client.request(.GET, path, headers: api.auth)
        #expect(download.status == 200)
        #expect(download.headers.first(name: "Content-Type") == "application/octet-stream")
        #expect(download.body.readableBytes == export["size"]?.intValue)
        let wrapped = try #require(export["encrypted_aes_key"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let iv = try #require(export["aes_iv"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        let aesKey = try key.decrypt(wrapped, padding: .PKCS1_OAEP)
        #expect(aesKey.count == 32)
        let compressed = try AES._CBC.decrypt(
            Array(download.body.readableBytesView), using: SymmetricKey(data: aesKey), iv: AES._CBC.IV(ivBytes: iv))
        var buffer = ByteBuffer(bytes: compressed)
        let text = String(buffer: try buffer.decompress(with: .gzip()))
        return try text.split(separator: "\n").map { line in
            try LayerJSONDecoder.make().decode(JSONValue.self, from: Data(line.utf8))
        }
    }

    @Test("An export is an archive of the app's events, encrypted for the key the app registered")
    func historicalExport() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (privateKey, publicPEM) = try Self.keyPair()

            let none = try await api.get("/export_security")
            #expect(none.status == 200)
            #expect(none.json == ["public_key": .null])
            let keyless = try await api.post("/exports", [:])
            #expect(keyless.status == 422)
            #expect(keyless.errorID == "invalid_operation")
            #expect(keyless.errorProperty == "public_key")
            for bad in ["not a key", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"] {
                let refused = try await api.put("/export_security", ["public_key": .string(bad)])
                #expect(refused.status == 422)
                #expect(refused.errorProperty == "public_key")
            }
            let registered = try await api.put("/export_security", ["public_key": .string(publicPEM)])
            #expect(registered.status == 200, "\(registered.text)")
            #expect(registered.json == ["public_key": .string(publicPEM)])
            #expect(try await api.get("/export_security").json == ["public_key": .string(publicPEM)])

            // What happens in the app: a conversation, a message read, a participant added, new
            // metadata, a message deleted for everybody, and another conversation deleted.
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let hello = try #require(try await alice.send("hello", to: conversation)["id"]?.stringValue)
            #expect(try await bob.post("/\(path(hello))/receipts", ["type": "read"]).status == 204)
            let patch = try await api.patch(
                "/\(path(conversation))",
                [
                    ["operation": "add", "property": "participants", "id": "layer:///identities/carol"],
                    ["operation": "set", "property": "metadata.topic", "value": "Plans"],
                ])
            #expect(patch.status == 204, "\(patch.text)")
            let bye = try #require(try await alice.send("bye", to: conversation)["id"]?.stringValue)
            #expect(try await alice.delete("/\(path(bye))?mode=all_participants").status == 204)
            let other = try await api.conversation(["alice", "dave"])
            #expect(try await api.delete("/\(path(other))").status == 204)

            let created = try await api.post("/exports", [:])
            #expect(created.status == 202, "\(created.text)")
            let export = try #require(created.json)
            let id = try #require(export["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///exports/"))
            #expect(export["status"] == "pending")
            #expect(export["type"] == "historical")
            #expect(export["download_url"] == .null)
            #expect(export["public_key"] == .string(publicPEM))
            #expect(created.headers.first(name: "Location") == "/apps/\(harness.appID)/exports/\(bareUUID(id))")
            #expect(export["status_url"]?.stringValue?.hasSuffix("/apps/\(harness.appID)/exports/\(bareUUID(id))/status") == true)
            // One at a time: while it waits or runs, another is refused with it.
            // (Unless the worker was quicker: then this is the next export.)
            let again = try await api.post("/exports", [:])
            var second: JSONValue?
            if again.status == 409 {
                #expect(again.errorID == "conflict")
                #expect(again.json?["data"]?["id"]?.stringValue == id)
            } else {
                #expect(again.status == 202, "\(again.text)")
                second = again.json
            }

            let done = try await Self.completed(export, api: api)
            #expect(done["status"] == "completed", "\(done)")
            #expect(done["completed_at"]?.stringValue != nil)
            #expect(done["aes_iv"]?.stringValue != nil)
            let lines = try await Self.open(done, api: api, key: privateKey, harness: harness)
            #expect(lines.count == done["event_count"]?.intValue)

            let types = lines.compactMap { $0["event"]?["type"]?.stringValue }
            let expected = [
                "conversation.created", "message.sent", "message.delivered", "message.read",
                "conversation.updated.participants", "conversation.updated.metadata", "message.sent", "message.deleted",
                "conversation.created", "conversation.deleted",
            ]
            #expect(types == expected)
            let times = lines.compactMap { $0["event"]?["created_at"]?.stringValue.flatMap(LayerTimestamp.date) }
            #expect(times.count == lines.count && times == times.sorted())
            #expect(Set(lines.compactMap { $0["event"]?["id"]?.stringValue }).count == lines.count)

            let start = lines[0]
            #expect(start["event"]?["actor"] == ["user_id": "alice"])
            #expect(start["conversation"]?["id"]?.stringValue == conversation)
            // In the order given; Alice, who created it without listing herself, last.
            #expect(start["conversation"]?["participants"] == ["bob", "alice"])
            let sent = lines[1]
            #expect(sent["message"]?["id"]?.stringValue == hello)
            #expect(sent["message"]?["parts"]?[0]?["body"] == "hello")
            #expect(sent["message"]?["sender"] == ["user_id": "alice"])
            #expect(sent["message"]?["conversation"]?["id"]?.stringValue == conversation)
            #expect(lines[3]["event"]?["actor"] == ["user_id": "bob"])
            let joined = lines[4]
            #expect(joined["changes"] == ["added": ["carol"], "removed": []])
            #expect(joined["conversation"]?["participants"] == ["bob", "alice", "carol"])
            // As it was after the change, which set the metadata in the same request.
            #expect(joined["conversation"]?["metadata"] == ["topic": "Plans"])
            #expect(lines[5]["conversation"]?["metadata"] == ["topic": "Plans"])
            #expect(lines[7]["message"]?["id"]?.stringValue == bye)
            #expect(lines[9]["conversation"]?["id"]?.stringValue == other)
            #expect(lines[9]["event"]?["actor"] == .null)

            // The same events in a later export carry the same ids.
            if second == nil {
                let response = try await api.post("/exports", [:])
                #expect(response.status == 202, "\(response.text)")
                second = response.json
            }
            let secondDone = try await Self.completed(try #require(second), api: api)
            let secondLines = try await Self.open(secondDone, api: api, key: privateKey, harness: harness)
            #expect(secondLines.map { $0["event"]?["id"] } == lines.map { $0["event"]?["id"] })

            let list = try await api.get("/exports")
            #expect(list.status == 200)
            #expect(list.headers.first(name: "Layer-Count") == "2")
            #expect(listedIDs(list) == [secondDone["id"]?.stringValue, id].compactMap { $0 })
            let paged = try await api.get("/exports?page_size=1&from_id=\(bareUUID(try #require(secondDone["id"]?.stringValue)))")
            #expect(listedIDs(paged) == [id])
            #expect(try await api.get("/exports/\(bareUUID(id))").json?["status"] == "completed")

            #expect(try await api.delete("/exports/\(bareUUID(id))").status == 204)
            #expect(try await api.get("/exports/\(bareUUID(id))").status == 404)
            #expect(try await api.get("/exports/\(bareUUID(id))/download").status == 404)
            #expect(try await api.delete("/exports/\(bareUUID(id))").status == 404)
            #expect(try await api.get("/exports").headers.first(name: "Layer-Count") == "1")
        }
    }

    @Test("The key may come as PEM without its line breaks; keys under 2048 bits are refused")
    func keyLayouts() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (_, publicPEM) = try Self.keyPair()
            let lines = publicPEM.split(separator: "\n").map(String.init)
            // As backends paste it into JSON: all on one line, spaces for newlines, CRLF line ends.
            let layouts = [lines.joined(), lines.joined(separator: " "), lines.joined(separator: "\r\n") + "\r\n"]
            for layout in layouts {
                #expect(try await api.put("/export_security", ["public_key": .string(layout)]).status == 200, "\(layout)")
                #expect(try await api.get("/export_security").json == ["public_key": .string(publicPEM)])
            }
            let weak = """
                -----BEGIN PUBLIC KEY-----
                MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDWgh4zVUbKY7RB/zO4ghFijsPN
                8duINDuYQELtPvrgUp6U1829SSRZv1pLzWK0pUGq6k8AgM2m2u3/fid8baz8k9cG
                B1uFKljFViz6RF2xLt4qFaG9RaA4OlABk1NPOPgOiOYGSt/XoTgLoql/PIs+dUm4
                /z8JLm2wzYgYUjB/mwIDAQAB
                -----END PUBLIC KEY-----
                """
            let weakLines = weak.split(separator: "\n").map(String.init)
            for layout in [weak, weakLines.joined(), weakLines.joined(separator: " ")] {
                let refused = try await api.put("/export_security", ["public_key": .string(layout)])
                #expect(refused.status == 422)
                #expect(refused.errorID == "invalid_property")
                #expect(refused.errorProperty == "public_key")
                #expect(refused.json?["message"]?.stringValue?.contains("2048 bits") == true)
            }
            // What was registered before stays.
            #expect(try await api.get("/export_security").json == ["public_key": .string(publicPEM)])
        }
    }

    @Test("Apps never see each other's exports, and an app without a key cannot export")
    func exportsStayWithTheirApp() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (_, publicPEM) = try Self.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let export = try #require(try await api.post("/exports", [:]).json)
            let id = bareUUID(try #require(export["id"]?.stringValue))
            _ = try await Self.completed(export, api: api)

            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let other = ServerClient(
                appID: otherApp.id.lowercased, token: try await harness.fixture.serverAPIToken(app: otherApp),
                client: harness.client)
            #expect(try await other.get("/export_security").json == ["public_key": .null])
            let list = try await other.get("/exports")
            #expect(list.json == [])
            #expect(list.headers.first(name: "Layer-Count") == "0")
            for path in ["/exports/\(id)", "/exports/\(id)/status", "/exports/\(id)/download"] {
                #expect(try await other.get(path).status == 404, "\(path)")
            }
            #expect(try await other.delete("/exports/\(id)").status == 404)
            let refused = try await other.post("/exports", [:])
            #expect(refused.status == 422)
            #expect(refused.errorProperty == "public_key")
            // Another app's token does not open this app's exports either.
            let foreign = try await harness.client.request(
                .GET, "/apps/\(harness.appID)/exports/\(id)", headers: other.auth)
            #expect(foreign.status == 401 || foreign.status == 403, "\(foreign.status)")
            #expect(try await api.get("/exports/\(id)").status == 200)
        }
    }

    @Test("A daily schedule exports the chosen events that happened since the last export")
    func scheduledExport() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (privateKey, publicPEM) = try Self.keyPair()
            let empty = try await api.get("/export_schedule")
            #expect(
                empty.json == [
                    "interval": "disabled", "events": [], "next_export_at": .null, "last_export_at": .null,
                    "last_export_id": .null,
                ])
            for (body, property) in [
                (["events": ["message.sent", "message.exploded"]], "events.1"),
                (["events": ["message.sent", 3]], "events.1"),
                (["events": "message.sent"], "events"),
                (["events": ["message.sent"], "interval": "weekly"], "interval"),
                (["events": []], "events"),
                (["events": ["message.sent"], "colour": "red"], "colour"),
            ] as [(JSONValue, String)] {
                let response = try await api.put("/export_schedule", body)
                #expect(response.status == 422, "\(body)")
                #expect(response.errorProperty == property, "\(body)")
            }
            let keyless = try await api.put("/export_schedule", ["events": ["message.sent"]])
            #expect(keyless.status == 422)
            #expect(keyless.errorProperty == "public_key")
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)

            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            _ = try await alice.send("before the schedule", to: conversation)
            let set = try await api.put("/export_schedule", ["events": ["message.sent", "message.read", "message.sent"]])
            #expect(set.status == 200, "\(set.text)")
            #expect(set.json?["interval"] == "daily")
            #expect(set.json?["events"] == ["message.sent", "message.read"])
            let next = try #require(set.json?["next_export_at"]?.stringValue.flatMap(LayerTimestamp.date))
            #expect(next.timeIntervalSinceNow > 23 * 3600)
            #expect(try await api.get("/export_schedule").json == set.json)

            let hello = try #require(try await alice.send("after", to: conversation)["id"]?.stringValue)
            #expect(try await bob.post("/\(path(hello))/receipts", ["type": "read"]).status == 204)
            // A day passes.
            try await harness.fixture.server.postgres.query(
                "UPDATE sync.export_schedules SET next_export_at = now() WHERE app_id = \(harness.fixture.app.id)",
                logger: .test)
            var scheduled: JSONValue?
            let deadline = ContinuousClock.now + .seconds(90)
            while scheduled == nil, ContinuousClock.now < deadline {
                scheduled = try await api.get("/exports").json?.arrayValue?.first { $0["type"] == "scheduled" }
                if scheduled == nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            let export = try #require(scheduled)
            #expect(export["events"] == ["message.sent", "message.read"])
            let done = try await Self.completed(export, api: api)
            let lines = try await Self.open(done, api: api, key: privateKey, harness: harness)
            #expect(lines.compactMap { $0["event"]?["type"]?.stringValue } == ["message.sent", "message.read"])
            #expect(lines.first?["message"]?["id"]?.stringValue == hello)

            let after = try await api.get("/export_schedule")
            #expect(after.json?["last_export_id"] == export["id"])
            let following = try #require(after.json?["next_export_at"]?.stringValue.flatMap(LayerTimestamp.date))
            #expect(following.timeIntervalSinceNow > 3600)
            let stopped = try await api.put("/export_schedule", ["events": ["message.sent"], "interval": "disabled"])
            #expect(stopped.json?["interval"] == "disabled")
            #expect(stopped.json?["next_export_at"] == .null)
        }
    }
}

/// The event names of a historical export.
enum ExportEventNames {
    static let all = [
        "conversation.created", "conversation.updated.participants", "conversation.updated.metadata", "message.sent",
        "message.delivered", "message.read", "message.deleted", "conversation.deleted",
    ]
}
