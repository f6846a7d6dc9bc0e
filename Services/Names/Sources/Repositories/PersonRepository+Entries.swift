import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

extension PersonRepository {
    /// One entry of tier 1 as part of a person, with who vouched for it.
    struct PersonEntry: Sendable {
        var id: UUID
        var seq: Int64
        var fromContact: Bool
        /// A user, or nil for the app's backend.
        var submitter: String?
        var document: PersonDocument
        var createdAt: Date
    }

    /// The entries a person is made of, oldest first.
    func entries(app: UUID, person: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws -> [PersonEntry] {
        let rows = try await connection.query(
            """
            SELECT pe.entry_id, pe.seq, pe.from_contact, pe.submitted_by, pe.record::text, e.created_at
            FROM names.person_entries pe JOIN names.entries e ON e.app_id = pe.app_id AND e.id = pe.entry_id
            WHERE pe.app_id = \(app) AND pe.person_id = \(person) ORDER BY pe.seq
            """, logger: logger)
        var result: [PersonEntry] = []
        let decoder = JSONDecoder()
        for try await (id, seq, contact, submitter, text, created) in rows.decode(
            (UUID, Int64, Bool, String?, String, Date).self)
        {
            result.append(
                PersonEntry(
                    id: id, seq: seq, fromContact: contact, submitter: submitter,
                    document: try decoder.decode(PersonDocument.self, from: Data(text.utf8)), createdAt: created))
        }
        return result
    }

    /// Takes `entry` out of `person` for its owner: it becomes a person of its own that nothing
    /// links to, and the entries left are linked again (they may part, where the entry was what
    /// joined them). The person that holds the owner's `system` address afterwards.
    func detach(app: UUID, person: UUID, entry: UUID, owner: String, logger: Logger) async throws -> UUID {
        try await write(logger: logger) { connection in
            try await lock(app: app, connection, logger)
            let entries = try await entries(app: app, person: person, connection, logger)
            guard let detached = entries.first(where: { $0.id == entry }) else {
                throw APIError(.notFound, "The entry is not part of this person.", property: "entry")
            }
            let namesOwner = detached.document.record.addresses.contains { $0.type == "system" && $0.value == owner }
            guard detached.submitter != owner, !namesOwner else {
                throw APIError.invalid("entry", "Your own entries, and those that name you by your user id, stay with you.")
            }
            try await connection.query(
                """
                INSERT INTO names.detached_entries (app_id, entry_id, detached_by) VALUES (\(app), \(entry), \(owner))
                """, logger: logger)
            try await connection.query(
                "DELETE FROM names.person_entries WHERE app_id = \(app) AND person_id = \(person)", logger: logger)
            try await linker.delete(app: app, persons: [person], connection, logger)
            let relinked = entries.map { stored in
                PersonLinker.Entry(
                    id: stored.id, seq: stored.seq, fromContact: stored.fromContact, submitter: stored.submitter,
                    detached: stored.id == entry, document: stored.document)
            }
            let persons = try await linker.link(app: app, relinked, connection, logger)
            let own = entries.firstIndex { stored in
                stored.document.record.addresses.contains { $0.type == "system" && $0.value == owner }
            }
            return persons[own ?? 0]
        }
    }
}
