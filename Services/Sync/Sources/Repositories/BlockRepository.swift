import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Blocks: a user (the owner) no longer sees the messages of the users they blocked and cannot
/// add them to conversations; the blocked users cannot add the owner to conversations either, do
/// not reach them with typing indicators, do not see their contact details, and the two do not
/// see each other's presence. The Server API manages them on the owner's behalf.
struct BlockRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The most users one owner may block, so that a list stays one page.
    static let maxBlocks = 10_000

    /// The users `owner` blocked, oldest block first.
    func blockedUsers(app: UUID, owner: String, logger: Logger) async throws -> [String] {
        let rows = try await postgres.query(
            """
            SELECT blocked_id FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(owner)
            ORDER BY created_at, blocked_id
            """, logger: logger)
        var result: [String] = []
        for try await user in rows.decode(String.self) { result.append(user) }
        return result
    }

    /// Those of `users` in a block with `user`, either way: whom `user` blocked and who blocked `user`.
    func blockedEitherWay(app: UUID, user: String, among users: [String], logger: Logger) async throws -> Set<String> {
        guard !users.isEmpty else { return [] }
        let rows = try await postgres.query(
            """
            SELECT blocked_id FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(user) AND blocked_id = ANY(\(users))
            UNION
            SELECT owner_id FROM sync.blocks WHERE app_id = \(app) AND blocked_id = \(user) AND owner_id = ANY(\(users))
            """, logger: logger)
        var result = Set<String>()
        for try await other in rows.decode(String.self) { result.insert(other) }
        return result
    }

    /// Blocks `blocked` for `owner`; blocking someone again changes nothing.
    func block(app: UUID, owner: String, blocked: String, logger: Logger) async throws {
        guard owner != blocked else { throw APIError.invalid("user_id", "A user cannot block themselves.") }
        try await write(logger: logger) { connection in
            // Serializes the owner's blocks so that the cap holds under concurrent requests.
            try await connection.query(
                "SELECT 1 FROM sync.identities WHERE app_id = \(app) AND user_id = \(owner) FOR UPDATE", logger: logger)
            let counted = try await connection.query(
                "SELECT count(*) FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(owner)", logger: logger)
            var count: Int64 = 0
            for try await value in counted.decode(Int64.self) { count = value }
            guard count < Self.maxBlocks else {
                throw APIError(.invalidOperation, "A user can block at most \(Self.maxBlocks) users.")
            }
            try await connection.query(
                """
                INSERT INTO sync.blocks (app_id, owner_id, blocked_id) VALUES (\(app), \(owner), \(blocked))
                ON CONFLICT DO NOTHING
                """, logger: logger)
        }
    }

    /// Lifts a block; lifting one that does not exist changes nothing.
    func unblock(app: UUID, owner: String, blocked: String, logger: Logger) async throws {
        try await write(
            "DELETE FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(owner) AND blocked_id = \(blocked)",
            logger: logger)
    }
}
