import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import Synchronization

struct IdentityRepository: PostgresRepository {
    let postgres: PostgresClient

    func identity(app: UUID, user: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> IdentityRecord? {
        let rows = try await connection.query(
            "SELECT \(unescaped: IdentityRecord.columns) FROM sync.identities WHERE app_id = \(app) AND user_id = \(user)",
            logger: logger)
        for try await row in rows { return try IdentityRecord(row: row) }
        return nil
    }

    /// Brings identities up to date with the claims of the identity tokens that opened sessions
    /// (a claim that is absent keeps the stored value), all in one transaction; a user without an
    /// identity gets one. Claims older than the identity's last change (an edit through the Server
    /// API, or a later sign-in reported first) are left out, and so is a user whose fields would
    /// not change.
    func recordClaims(_ claims: [InternalAPI.SignInClaims], app: UUID, logger: Logger) async throws {
        // In user order, as every other writer of several identities goes, so that two of them
        // never wait for each other (one user's claims keep their order).
        let ordered = claims.enumerated().sorted {
            ($0.element.identity.userID, $0.offset) < ($1.element.identity.userID, $1.offset)
        }
        try await write(logger: logger) { connection in
            for (_, claim) in ordered {
                let identity = claim.identity
                try await connection.query(
                    """
                    INSERT INTO sync.identities AS i (app_id, user_id, display_name, avatar_url, first_name, last_name, updated_at)
                    VALUES (\(app), \(identity.userID), \(identity.displayName), \(identity.avatarURL), \(identity.firstName),
                        \(identity.lastName), timestamptz 'epoch' + \(claim.signedInAt) * interval '1 microsecond')
                    ON CONFLICT (app_id, user_id) DO UPDATE SET
                        display_name = coalesce(excluded.display_name, i.display_name),
                        avatar_url = coalesce(excluded.avatar_url, i.avatar_url),
                        first_name = coalesce(excluded.first_name, i.first_name),
                        last_name = coalesce(excluded.last_name, i.last_name),
                        updated_at = excluded.updated_at
                    WHERE i.updated_at <= excluded.updated_at
                      AND (i.display_name, i.avatar_url, i.first_name, i.last_name)
                        IS DISTINCT FROM (coalesce(excluded.display_name, i.display_name), coalesce(excluded.avatar_url, i.avatar_url),
                                          coalesce(excluded.first_name, i.first_name), coalesce(excluded.last_name, i.last_name))
                    """, logger: logger)
            }
        }
    }

    /// Gives the user an identity from a session's claims if they have none; an existing one is
    /// left as it is (the claims reached it when the session opened, and the app's backend may
    /// have changed it since).
    func ensureIdentity(_ claims: InternalAPI.Identity, app: UUID, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.identities (app_id, user_id, display_name, avatar_url, first_name, last_name)
            VALUES (\(app), \(claims.userID), \(claims.displayName), \(claims.avatarURL), \(claims.firstName),
                \(claims.lastName))
            ON CONFLICT (app_id, user_id) DO NOTHING
            """, logger: logger)
    }

    /// The identities of those of `users` who have one.
    func identities(app: UUID, users: [String], logger: Logger) async throws -> [IdentityRecord] {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: IdentityRecord.columns) FROM sync.identities
            WHERE app_id = \(app) AND user_id = ANY(\(users)) ORDER BY user_id
            """, logger: logger)
        var result: [IdentityRecord] = []
        for try await row in rows { result.append(try IdentityRecord(row: row)) }
        return result
    }
}
