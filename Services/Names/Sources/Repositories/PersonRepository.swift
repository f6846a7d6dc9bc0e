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

    /// A person as stored, with who stated each of its addresses.
    struct Person: Sendable {
        var id: UUID
        var document: PersonDocument
        var createdAt: Date
        var updatedAt: Date
        var sources: [AddressKey: AddressSource] = [:]
    }

    /// Who stated an address of a person: the app's backend, and which users.
    struct AddressSource: Sendable {
        var fromApp: Bool
        var users: [String]

        /// Whether `caller` stated it.
        func includes(_ caller: Caller) -> Bool {
            guard let user = caller.user else { return fromApp }
            return users.contains(user)
        }
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
        try Task.checkCancellation()
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
                id: id, seq: seqs[id]!, fromContact: book != nil, submitter: submitter,
                document: PersonDocument(record: person.record, devices: person.devices).vouched(by: submitter))
        }
        do {
            return (try await linker.link(app: app, entries, connection, logger), ids)
        } catch let exceeded as PersonLinker.LimitExceeded {
            throw APIError(
                .invalidProperty,
                "Record \(exceeded.index) would give its person more than \(exceeded.limit) \(exceeded.what), "
                    + "the most one person holds.",
                property: "\(book == nil ? "persons" : "contacts")[\(exceeded.index)]",
                extra: ["limit": .number(Double(exceeded.limit))])
        }
    }

    /// One app's writers take turns. An import of thousands of records computes between its
    /// statements, so its transaction gets the minute its import has (``ImportDeadline``).
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
        let sources = try await connection.query(
            """
            SELECT person_id, type, value, from_app, submitters FROM names.addresses
            WHERE app_id = \(app) AND person_id = ANY(\(ids))
            """, logger: logger)
        for try await (id, type, value, fromApp, users) in sources.decode((UUID, String, String, Bool, [String]).self) {
            result[id]?.sources[AddressKey(type: type, value: value)] = AddressSource(fromApp: fromApp, users: users)
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
                try Task.checkCancellation()
                let rows = try await connection.query(
                    """
                    SELECT e.id, e.seq, e.book_id IS NOT NULL, e.submitted_by, d.entry_id IS NOT NULL, e.region, e.body::text
                    FROM names.entries e
                    LEFT JOIN names.detached_entries d ON d.app_id = e.app_id AND d.entry_id = e.id
                    WHERE e.app_id = \(app) AND e.seq > \(after) ORDER BY e.seq LIMIT \(batch)
                    """, logger: logger)
                var entries: [PersonLinker.Entry] = []
                for try await (id, seq, contact, submitter, detached, region, body) in rows.decode(
                    (UUID, Int64, Bool, String?, Bool, String, String).self)
                {
                    let raw = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
                    var problems: [RecordProblem] = []
                    guard let person = PersonReader(defaultRegion: region).read(raw, index: 0, problems: &problems) else {
                        continue
                    }
                    entries.append(
                        .init(
                            id: id, seq: seq, fromContact: contact, submitter: submitter, detached: detached,
                            document: PersonDocument(record: person.record, devices: person.devices).vouched(by: submitter)))
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
        var address: AddressKey
        var person: UUID
        var systemUsers: [String]
        var verified: Bool
        var source: AddressSource
        var owner: String?
        var barredApps: [UUID]
        var policy: PolicyRepository.AddressPolicy
        /// A person made of one entry its owner detached from theirs.
        var isolated: Bool

        /// How many distinct submitters stated the address (the app's backend counts as one).
        var submitters: Int { source.users.count + (source.fromApp ? 1 : 0) }
    }

    /// The persons that hold any of `addresses`, in one read. The owner of each is the user of
    /// its `system` addresses who claimed first.
    func holders(app: UUID, of addresses: [AddressKey], logger: Logger) async throws -> [Holder] {
        guard !addresses.isEmpty else { return [] }
        let rows = try await postgres.query(
            """
            SELECT a.type, a.value, a.person_id, a.verified, a.from_app, a.submitters, p.isolated,
                   ARRAY(SELECT s.value FROM names.addresses s
                         WHERE s.app_id = a.app_id AND s.person_id = a.person_id AND s.type = 'system' ORDER BY s.value),
                   c.user_id, c.barred_apps,
                   coalesce(pol.policy, 'public'), coalesce(pol.removed, false), coalesce(pol.hidden, false)
            FROM names.addresses a
            JOIN unnest(\(addresses.map(\.type))::text[], \(addresses.map(\.value))::text[]) AS k(type, value)
                ON a.type = k.type AND a.value = k.value
            JOIN names.persons p ON p.app_id = a.app_id AND p.id = a.person_id
            LEFT JOIN LATERAL (
                SELECT c.user_id, c.barred_apps FROM names.claims c
                JOIN names.addresses s ON s.app_id = c.app_id AND s.type = 'system' AND s.value = c.user_id
                WHERE c.app_id = a.app_id AND s.person_id = a.person_id ORDER BY c.seq LIMIT 1) c ON true
            LEFT JOIN names.address_policies pol
                ON pol.app_id = a.app_id AND pol.user_id = c.user_id AND pol.type = a.type AND pol.value = a.value
            WHERE a.app_id = \(app)
            ORDER BY a.person_id
            """, logger: logger)
        var result: [Holder] = []
        for try await row in rows {
            let (type, value, person, verified, fromApp, users, isolated, systemUsers, owner, barred, policy, removed, hidden) =
                try row.decode(
                    (String, String, UUID, Bool, Bool, [String], Bool, [String], String?, [UUID]?, String, Bool, Bool).self)
            result.append(
                Holder(
                    address: AddressKey(type: type, value: value), person: person, systemUsers: systemUsers,
                    verified: verified, source: AddressSource(fromApp: fromApp, users: users), owner: owner,
                    barredApps: barred ?? [], policy: .init(policy: policy, removed: removed, hidden: hidden),
                    isolated: isolated))
        }
        return result
    }
}
