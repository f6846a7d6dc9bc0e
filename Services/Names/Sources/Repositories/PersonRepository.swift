import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching
import PostgresNIO

/// The persons store of each app: records in (tier 1), persons and their likely duplicates out
/// (tier 2), and the address index (tier 3).
struct PersonRepository: PostgresRepository {
    let postgres: PostgresClient
    let linker: PersonLinker

    /// A person as stored, with who may decide about it.
    struct Person: Sendable {
        var id: UUID
        var document: PersonDocument
        var createdAt: Date
        var updatedAt: Date
    }

    /// Adds `people` as new entries of tier 1 and links them; the person of each, in order.
    /// Writers of one app take turns (an advisory lock), so that two requests adding the same
    /// user at once make one person.
    func add(
        app: UUID, _ people: [ValidatedPerson], submitter: String?, region: String, book: UUID? = nil, logger: Logger
    ) async throws -> [UUID] {
        try await write(logger: logger) { connection in
            try await add(app: app, people, submitter: submitter, region: region, book: book, connection, logger).persons
        }
    }

    /// ``add(app:_:submitter:region:book:logger:)`` inside a transaction of the caller's; the
    /// entry ids too.
    func add(
        app: UUID, _ people: [ValidatedPerson], submitter: String?, region: String, book: UUID?,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (persons: [UUID], entries: [UUID]) {
        try await lock(app: app, connection, logger)
        let ids = people.map { _ in UUID() }
        let bodies = people.map(\.raw.jsonText)
        let rows = try await connection.query(
            """
            INSERT INTO names.entries (app_id, id, book_id, submitted_by, region, body)
            SELECT \(app), u.id, \(book), \(submitter), \(region), u.body::jsonb
            FROM unnest(\(ids)::uuid[], \(bodies)::text[]) WITH ORDINALITY AS u(id, body, n) ORDER BY u.n
            RETURNING id, seq
            """, logger: logger)
        var seqs: [UUID: Int64] = [:]
        for try await (id, seq) in rows.decode((UUID, Int64).self) { seqs[id] = seq }
        let entries = zip(ids, people).map { id, person in
            PersonLinker.Entry(
                id: id, seq: seqs[id]!, fromContact: book != nil,
                document: PersonDocument(record: person.record, devices: person.devices))
        }
        return (try await linker.link(app: app, entries, connection, logger), ids)
    }

    /// One app's writers take turns. An import of thousands of records computes between its
    /// statements, so its transaction gets the minute its request has (``NamesService/requestDeadline(_:)``).
    func lock(app: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("SET LOCAL idle_in_transaction_session_timeout = 60000", logger: logger)
        try await connection.query("SET LOCAL statement_timeout = 60000", logger: logger)
        try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(app.lowercased), 83))", logger: logger)
    }

    func persons(app: UUID, ids: [UUID], _ connection: PostgresConnection, _ logger: Logger) async throws -> [UUID: Person] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT id, record::text, created_at, updated_at FROM names.persons WHERE app_id = \(app) AND id = ANY(\(ids))
            """, logger: logger)
        var result: [UUID: Person] = [:]
        let decoder = JSONDecoder()
        for try await (id, text, created, updated) in rows.decode((UUID, String, Date, Date).self) {
            result[id] = Person(
                id: id, document: try decoder.decode(PersonDocument.self, from: Data(text.utf8)), createdAt: created,
                updatedAt: updated)
        }
        return result
    }

    func person(app: UUID, id: UUID, logger: Logger) async throws -> Person? {
        try await read(logger: logger) { try await persons(app: app, ids: [id], $0, logger)[id] }
    }

    /// Drops tiers 2 and 3 of an app and computes them again from tier 1, oldest entry first;
    /// the number of entries replayed.
    @discardableResult
    func recomputeAll(app: UUID, batch: Int = 1000, logger: Logger) async throws -> Int {
        try await write(logger: logger) { connection in
            try await lock(app: app, connection, logger)
            for table in ["persons", "person_entries", "addresses", "blocks", "matches", "app_models"] {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "DELETE FROM names.\(table) WHERE app_id = $1",
                        binds: {
                            var binds = PostgresBindings()
                            binds.append(app)
                            return binds
                        }()), logger: logger)
            }
            var after: Int64 = 0
            var replayed = 0
            while true {
                let rows = try await connection.query(
                    """
                    SELECT id, seq, book_id IS NOT NULL, region, body::text FROM names.entries
                    WHERE app_id = \(app) AND seq > \(after) ORDER BY seq LIMIT \(batch)
                    """, logger: logger)
                var entries: [PersonLinker.Entry] = []
                for try await (id, seq, contact, region, body) in rows.decode((UUID, Int64, Bool, String, String).self) {
                    let raw = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
                    var problems: [RecordProblem] = []
                    guard let person = PersonReader(defaultRegion: region).read(raw, index: 0, problems: &problems) else {
                        continue
                    }
                    entries.append(
                        .init(
                            id: id, seq: seq, fromContact: contact,
                            document: PersonDocument(record: person.record, devices: person.devices)))
                    after = seq
                }
                guard !entries.isEmpty else { return replayed }
                _ = try await linker.link(app: app, entries, connection, logger)
                replayed += entries.count
            }
        }
    }
}

extension PersonRepository {
    /// A person that holds an address, with what resolution needs in one read: the person, its
    /// owner if it was claimed, the apps they bar and the policy of that address.
    struct Holder: Sendable {
        var person: Person
        var verified: Bool
        var sources: Int
        var owner: String?
        var barredApps: [UUID]
        var policy: PolicyRepository.AddressPolicy
    }

    func holders(app: UUID, of address: AddressKey, logger: Logger) async throws -> [Holder] {
        let rows = try await postgres.query(
            """
            SELECT a.person_id, a.verified, a.sources, p.record::text, p.created_at, p.updated_at, c.user_id, c.barred_apps,
                   coalesce(pol.policy, 'public'), coalesce(pol.removed, false), coalesce(pol.hidden, false)
            FROM names.addresses a
            JOIN names.persons p ON p.app_id = a.app_id AND p.id = a.person_id
            LEFT JOIN LATERAL (
                SELECT c.user_id, c.barred_apps FROM names.claims c
                JOIN names.addresses s ON s.app_id = c.app_id AND s.type = 'system' AND s.value = c.user_id
                WHERE c.app_id = a.app_id AND s.person_id = a.person_id ORDER BY c.user_id LIMIT 1) c ON true
            LEFT JOIN names.address_policies pol
                ON pol.app_id = a.app_id AND pol.user_id = c.user_id AND pol.type = a.type AND pol.value = a.value
            WHERE a.app_id = \(app) AND a.type = \(address.type) AND a.value = \(address.value)
            ORDER BY a.person_id
            """, logger: logger)
        var result: [Holder] = []
        let decoder = JSONDecoder()
        for try await row in rows {
            let (id, verified, sources, text, created, updated, owner, barred, policy, removed, hidden) = try row.decode(
                (UUID, Bool, Int32, String, Date, Date, String?, [UUID]?, String, Bool, Bool).self)
            result.append(
                Holder(
                    person: Person(
                        id: id, document: try decoder.decode(PersonDocument.self, from: Data(text.utf8)), createdAt: created,
                        updatedAt: updated),
                    verified: verified, sources: Int(sources), owner: owner, barredApps: barred ?? [],
                    policy: .init(policy: policy, removed: removed, hidden: hidden)))
        }
        return result
    }
}
