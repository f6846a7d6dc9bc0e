import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Address books: a user's contacts, each also an entry of the app's persons store (so that
/// books of many users deduplicate globally), kept in the order they were imported.
struct AddressBookRepository: PostgresRepository {
    let postgres: PostgresClient

    struct Contact: Sendable {
        var id: UUID
        var position: Int
        var entry: UUID
        var document: PersonDocument
        var mergedInto: UUID?
    }

    func create(
        app: UUID, id: UUID, owner: String?, contacts: [(id: UUID, entry: UUID, document: PersonDocument)],
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            "INSERT INTO names.address_books (app_id, id, owner_id) VALUES (\(app), \(id), \(owner))", logger: logger)
        let documents = try contacts.map { String(decoding: try JSONEncoder.sorted.encode($0.document), as: UTF8.self) }
        try await connection.query(
            """
            INSERT INTO names.contacts (app_id, id, book_id, position, entry_id, record)
            SELECT \(app), u.id, \(id), u.n - 1, u.entry, u.record::jsonb
            FROM unnest(\(contacts.map(\.id))::uuid[], \(contacts.map(\.entry))::uuid[], \(documents)::text[])
                WITH ORDINALITY AS u(id, entry, record, n)
            """, logger: logger)
    }

    /// The owner of a book (nil for one the app's backend imported); nil when it is not there.
    func owner(app: UUID, book: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws -> String?? {
        let rows = try await connection.query(
            "SELECT owner_id FROM names.address_books WHERE app_id = \(app) AND id = \(book)", logger: logger)
        for try await owner in rows.decode(String?.self) { return .some(owner) }
        return nil
    }

    /// The contacts of a book that were not merged into another, in import order.
    func contacts(app: UUID, book: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws -> [Contact] {
        let rows = try await connection.query(
            """
            SELECT id, position, entry_id, record::text, merged_into FROM names.contacts
            WHERE app_id = \(app) AND book_id = \(book) ORDER BY position
            """, logger: logger)
        var result: [Contact] = []
        let decoder = JSONDecoder()
        for try await (id, position, entry, text, merged) in rows.decode((UUID, Int32, UUID, String, UUID?).self) {
            result.append(
                Contact(
                    id: id, position: Int(position), entry: entry,
                    document: try decoder.decode(PersonDocument.self, from: Data(text.utf8)), mergedInto: merged))
        }
        return result
    }

    /// The persons the entries of `contacts` belong to.
    func persons(app: UUID, entries: [UUID], _ connection: PostgresConnection, _ logger: Logger) async throws -> [UUID: UUID] {
        let rows = try await connection.query(
            "SELECT entry_id, person_id FROM names.person_entries WHERE app_id = \(app) AND entry_id = ANY(\(entries))",
            logger: logger)
        var result: [UUID: UUID] = [:]
        for try await (entry, person) in rows.decode((UUID, UUID).self) { result[entry] = person }
        return result
    }

    func consolidate(
        app: UUID, keep: UUID, merge: UUID, document: PersonDocument, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let text = String(decoding: try JSONEncoder.sorted.encode(document), as: UTF8.self)
        try await connection.query(
            "UPDATE names.contacts SET record = \(text)::jsonb, updated_at = now() WHERE app_id = \(app) AND id = \(keep)",
            logger: logger)
        try await connection.query(
            "UPDATE names.contacts SET merged_into = \(keep), updated_at = now() WHERE app_id = \(app) AND id = \(merge)",
            logger: logger)
    }
}
