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

/// Exports that outgrow one process's view: an archive stored and read back in pieces, an export
/// taken over from a replica that stopped, and waiting exports shared out among replicas.
extension ServerAPIExportTests {
    @Test("An archive larger than one stored piece is stored and downloaded in pieces, and opens as one")
    func largeArchive() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (privateKey, publicPEM) = try Self.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            _ = try await alice.send("first", to: conversation)
            let conversationID = try #require(LayerID(parsing: conversation, as: .conversations)).uuid
            // 3,000 messages of 1.5 KB that compress to about half: a few MiB of archive.
            try await harness.fixture.server.postgres.query(
                """
                INSERT INTO sync.messages (app_id, id, conversation_id, position, sender_id, parts, sent_at)
                SELECT \(harness.fixture.app.id), gen_random_uuid(), \(conversationID),
                    100 + g, 'alice',
                    jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'mime_type', 'text/plain',
                        'body', (SELECT string_agg(md5(random()::text || i || g), '') FROM generate_series(1, 47) AS i))),
                    now() - interval '10 seconds' + g * interval '1 millisecond'
                FROM generate_series(1, 3000) AS g
                """, logger: .test)
            let export = try #require(try await api.post("/exports", [:]).json)
            let done = try await Self.completed(export, api: api)
            let size = try #require(done["size"]?.intValue)
            #expect(size > 2 * 1024 * 1024)
            let exportID = try #require(done["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: .exports) }).uuid
            let pieces = try await harness.fixture.server.postgres.query(
                "SELECT count(*) FROM sync.export_chunks WHERE export_id = \(exportID)", logger: .test)
            for try await count in pieces.decode(Int64.self) { #expect(count == Int64((size + 1024 * 1024 - 1) / (1024 * 1024))) }
            let lines = try await Self.open(done, api: api, key: privateKey, harness: harness)
            #expect(lines.count == 3002)
            let last = lines.first { $0["message"]?["position"] == 3100 }
            #expect(last?["message"]?["parts"]?[0]?["body"]?.stringValue?.count == 47 * 32)
        }
    }

    @Test("An export left executing by a replica that stopped is taken over once its lease runs out")
    func abandonedExportIsTakenOver() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (privateKey, publicPEM) = try Self.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            _ = try await alice.send("hello", to: conversation)
            let postgres = harness.fixture.server.postgres
            let app = harness.fixture.app.id
            // Claimed by a worker that is gone (its lease ran out), and one whose worker still holds it.
            let (gone, held) = (UUID(), UUID())
            for (id, type, lease) in [(gone, "scheduled", -1), (held, "historical", 3600)] {
                try await postgres.query(
                    """
                    INSERT INTO sync.exports (app_id, id, type, status, events, until, public_key, expires_at, claim,
                        lease_until, attempts, started_at)
                    VALUES (\(app), \(id), \(type), 'executing', \(["message.sent"]), now(), \(publicPEM),
                        now() + interval '1 day', \(UUID()), now() + \(lease) * interval '1 second', 1, now())
                    """, logger: .test)
            }
            let taken = try await Self.completed(["id": .string(LayerID(.exports, gone).uri)], api: api)
            #expect(taken["status"] == "completed")
            let lines = try await Self.open(taken, api: api, key: privateKey, harness: harness)
            #expect(lines.compactMap { $0["event"]?["type"]?.stringValue } == ["message.sent"])
            let still = try await api.get("/exports/\(held.lowercased)/status")
            #expect(still.json?["status"] == "executing")
            // While the app's historical export runs, another is refused with it.
            let refused = try await api.post("/exports", [:])
            #expect(refused.status == 409)
            #expect(refused.errorID == "conflict")
            #expect(refused.json?["data"]?["id"]?.stringValue == LayerID(.exports, held).uri)
            let rows = try await postgres.query("SELECT attempts FROM sync.exports WHERE id = \(gone)", logger: .test)
            for try await attempts in rows.decode(Int32.self) { #expect(attempts == 2) }
        }
    }

    @Test("Replicas share the waiting exports: each is built once, by one of them")
    func replicasShareTheWork() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (_, publicPEM) = try Self.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            _ = try await alice.send("hello", to: conversation)
            try await harness.withReplica { _ in
                let ids = (0..<6).map { _ in UUID() }
                try await harness.fixture.server.postgres.query(
                    """
                    INSERT INTO sync.exports (app_id, id, type, events, until, public_key, expires_at)
                    SELECT \(harness.fixture.app.id), id, 'scheduled', \(ExportEventNames.all), now(), \(publicPEM),
                        now() + interval '1 day'
                    FROM unnest(\(ids)::uuid[]) AS id
                    """, logger: .test)
                for id in ids {
                    let done = try await Self.completed(["id": .string(LayerID(.exports, id).uri)], api: api)
                    #expect(done["status"] == "completed")
                    #expect(done["event_count"] == 2)
                }
                let rows = try await harness.fixture.server.postgres.query(
                    "SELECT attempts FROM sync.exports WHERE id = ANY(\(ids))", logger: .test)
                for try await attempts in rows.decode(Int32.self) { #expect(attempts == 1) }
            }
        }
    }
}
