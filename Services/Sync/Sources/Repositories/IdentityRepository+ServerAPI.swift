import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

extension IdentityRepository {
    func userExists(app: UUID, user: String, logger: Logger) async throws -> Bool {
        let rows = try await postgres.query(
            "SELECT 1 FROM sync.identities WHERE app_id = \(app) AND user_id = \(user)", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// 404 `not_found` unless `user` exists in the app.
    func requireUser(app: UUID, user: String, logger: Logger) async throws {
        guard try await userExists(app: app, user: user, logger: logger) else {
            throw APIError.notFound("The user '\(user)'")
        }
    }

    /// Creates the identity; false (and nothing changed) when the user has one already.
    func createIdentity(app: UUID, _ record: IdentityRecord, logger: Logger) async throws -> Bool {
        let rows = try await write(
            """
            INSERT INTO sync.identities (app_id, user_id, display_name, avatar_url, first_name, last_name,
                phone_number, email_address, public_key, identity_type, metadata)
            VALUES (\(app), \(record.userID), \(record.displayName), \(record.avatarURL), \(record.firstName),
                \(record.lastName), \(record.phoneNumber), \(record.emailAddress), \(record.publicKey),
                \(record.identityType), \(Self.metadataText(record.metadata))::jsonb)
            ON CONFLICT (app_id, user_id) DO NOTHING
            RETURNING user_id
            """, logger: logger)
        for _ in rows { return true }
        return false
    }

    /// Replaces every field of an existing identity; what it was and is now, nil when the user
    /// has none.
    func replaceIdentity(
        app: UUID, _ record: IdentityRecord, logger: Logger
    ) async throws -> (before: IdentityRecord, after: IdentityRecord)? {
        try await write(logger: logger) { connection in
            guard let before = try await locked(app: app, user: record.userID, connection, logger) else { return nil }
            _ = try await update(app: app, record, connection, logger)
            return (before, record)
        }
    }

    /// Applies a Layer-Patch to an existing identity, all operations or none; 404 without one.
    /// Returns what it was and is now.
    func patchIdentity(
        app: UUID, user: String, operations: [LayerPatchOperation], logger: Logger
    ) async throws -> (before: IdentityRecord, after: IdentityRecord) {
        try await write(logger: logger) { connection in
            guard let before = try await locked(app: app, user: user, connection, logger) else {
                throw APIError.notFound("The user '\(user)'")
            }
            var record = before
            for operation in operations { try IdentityRules.apply(operation, to: &record) }
            try IdentityRules.validate(record)
            _ = try await update(app: app, record, connection, logger)
            return (before, record)
        }
    }

    /// The identity, locked until the transaction ends.
    private func locked(
        app: UUID, user: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> IdentityRecord? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: IdentityRecord.columns) FROM sync.identities
            WHERE app_id = \(app) AND user_id = \(user) FOR UPDATE
            """, logger: logger)
        var found: IdentityRecord?
        for try await row in rows { found = try IdentityRecord(row: row) }
        return found
    }

    /// Removes the identity; false when there was none. A later session or membership of a
    /// conversation makes a new, empty one.
    func deleteIdentity(app: UUID, user: String, logger: Logger) async throws -> Bool {
        let rows = try await write(
            "DELETE FROM sync.identities WHERE app_id = \(app) AND user_id = \(user) RETURNING user_id", logger: logger)
        for _ in rows { return true }
        return false
    }

    private func update(
        app: UUID, _ record: IdentityRecord, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            UPDATE sync.identities SET display_name = \(record.displayName), avatar_url = \(record.avatarURL),
                first_name = \(record.firstName), last_name = \(record.lastName), phone_number = \(record.phoneNumber),
                email_address = \(record.emailAddress), public_key = \(record.publicKey),
                identity_type = \(record.identityType), metadata = \(Self.metadataText(record.metadata))::jsonb,
                updated_at = now()
            WHERE app_id = \(app) AND user_id = \(record.userID)
            RETURNING user_id
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    static func metadataText(_ metadata: [String: String]) -> String {
        String(decoding: (try? JSONEncoder().encode(metadata)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
