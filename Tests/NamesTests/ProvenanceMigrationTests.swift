import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Logging
import NameMatching
import PostgresNIO
import Testing

@testable import LayerNames

/// Migration 2 gives the address index of a store written before it the provenance the linker
/// now records: the same rows as computing the store again from its raw tier.
@Suite struct ProvenanceMigrationTests {
    /// Ada's person as the linker wrote it before migration 2: her record from the app's backend
    /// (e-mail verified) and one she sent herself (a phone she flagged verified, which only the
    /// app's backend may do).
    private func makeHistory(app: UUID, _ postgres: PostgresClient) async throws -> UUID {
        let byApp = PersonRecord(
            firstName: "Ada", lastName: "Lovelace",
            addresses: [.init(type: "system", value: "ada"), .init(type: "email", value: "ada@example.com", verified: true)])
        let bySelf = PersonRecord(
            firstName: "Ada",
            addresses: [.init(type: "system", value: "ada"), .init(type: "phone", value: "+14155550100", verified: true)])
        let bodies: [JSONValue] = [
            [
                "first_name": "Ada", "last_name": "Lovelace",
                "addresses": [
                    ["type": "system", "value": "ada"], ["type": "email", "value": "ada@example.com", "verified": true],
                ],
            ],
            [
                "first_name": "Ada",
                "addresses": [
                    ["type": "system", "value": "ada"], ["type": "phone", "value": "+14155550100", "verified": true],
                ],
            ],
        ]
        let (first, second) = (UUID(), UUID())
        func text(_ record: PersonRecord) throws -> String {
            String(decoding: try JSONEncoder.sorted.encode(PersonDocument(record: record, devices: [])), as: UTF8.self)
        }
        let merged = PersonDocument.merged([byApp, bySelf].map { PersonDocument(record: $0, devices: []) })
        let features = String(decoding: try JSONEncoder.sorted.encode(MatchFeatures(merged.record)), as: UTF8.self)
        let statements: [PostgresQuery] = [
            """
            INSERT INTO names.entries (app_id, id, seq, submitted_by, region, body)
            VALUES (\(app), \(first), 1, NULL, 'US', \(bodies[0].jsonText)::jsonb),
                   (\(app), \(second), 2, 'ada', 'US', \(bodies[1].jsonText)::jsonb)
            """,
            """
            INSERT INTO names.person_entries (app_id, entry_id, person_id, seq, from_contact, record)
            VALUES (\(app), \(first), \(first), 1, false, \(try text(byApp))::jsonb),
                   (\(app), \(second), \(first), 2, false, \(try text(bySelf))::jsonb)
            """,
            """
            INSERT INTO names.persons (app_id, id, first_seq, record, features)
            VALUES (\(app), \(first), 1, \(String(decoding: try JSONEncoder.sorted.encode(merged), as: UTF8.self))::jsonb,
                    \(features)::jsonb)
            """,
            """
            INSERT INTO names.addresses (app_id, type, value, person_id, verified, sources, contact_sources)
            VALUES (\(app), 'system', 'ada', \(first), false, 2, 0), (\(app), 'email', 'ada@example.com', \(first), true, 1, 0),
                   (\(app), 'phone', '+14155550100', \(first), true, 1, 0)
            """,
        ]
        for statement in statements { try await postgres.query(statement, logger: .test) }
        return first
    }

    private func addresses(app: UUID, _ postgres: PostgresClient) async throws -> Set<String> {
        let rows = try await postgres.query(
            "SELECT type, value, verified, sources, from_app, submitters FROM names.addresses WHERE app_id = \(app)",
            logger: .test)
        var result = Set<String>()
        for try await (type, value, verified, sources, fromApp, users) in rows.decode(
            (String, String, Bool, Int32, Bool, [String]).self)
        {
            result.insert("\(type):\(value) verified=\(verified) sources=\(sources) app=\(fromApp) users=\(users)")
        }
        return result
    }

    @Test func theBackfillGivesWhatComputingTheStoreAgainGives() async throws {
        let database = try await TestDatabase.isolated()
        let postgres = database.makeClient(logger: .test)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await postgres.run() }
            let before = MigrationRunner(schema: "names", migrations: namesMigrations.migrations.filter { $0.version < 2 })
            try await before.run(on: postgres, logger: .test)
            let app = UUID()
            _ = try await makeHistory(app: app, postgres)
            try await namesMigrations.run(on: postgres, logger: .test)

            let backfilled = try await addresses(app: app, postgres)
            #expect(
                backfilled == [
                    "system:ada verified=false sources=2 app=true users=[\"ada\"]",
                    "email:ada@example.com verified=true sources=1 app=true users=[]",
                    "phone:+14155550100 verified=false sources=1 app=false users=[\"ada\"]",
                ], "\(backfilled)")
            let repository = Directory(postgres: postgres, defaultRegion: "US").persons
            #expect(try await repository.recomputeAll(app: app, logger: Logger(label: "test")) == 2)
            #expect(try await addresses(app: app, postgres) == backfilled)
            group.cancelAll()
        }
    }
}
