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
        let found = try await blocks(app: app, between: user, and: users, logger: logger)
        return found.blocked.union(found.blockedBy)
    }

    /// Those of `users` whom `user` blocked, and those who blocked `user`.
    func blocks(
        app: UUID, between user: String, and users: [String], logger: Logger
    ) async throws -> (blocked: Set<String>, blockedBy: Set<String>) {
        guard !users.isEmpty else { return ([], []) }
        let rows = try await postgres.query(
            """
            SELECT blocked_id, true FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(user) AND blocked_id = ANY(\(users))
            UNION ALL
            SELECT owner_id, false FROM sync.blocks WHERE app_id = \(app) AND blocked_id = \(user) AND owner_id = ANY(\(users))
            """, logger: logger)
        var result: (blocked: Set<String>, blockedBy: Set<String>) = ([], [])
        for try await (other, blockedByUser) in rows.decode((String, Bool).self) {
            if blockedByUser { result.blocked.insert(other) } else { result.blockedBy.insert(other) }
        }
        return result
    }

    /// Those of `owners` who blocked `user`: whose contact details `user` may not see.
    func blockers(app: UUID, of user: String, among owners: [String], logger: Logger) async throws -> Set<String> {
        guard !owners.isEmpty else { return [] }
        let rows = try await postgres.query(
            "SELECT owner_id FROM sync.blocks WHERE app_id = \(app) AND blocked_id = \(user) AND owner_id = ANY(\(owners))",
            logger: logger)
        var result = Set<String>()
        for try await owner in rows.decode(String.self) { result.insert(owner) }
        return result
    }

    /// Blocks `blocked` for `owner`; blocking someone again, or oneself, changes nothing.
    func block(app: UUID, owner: String, blocked: String, logger: Logger) async throws {
        guard owner != blocked else { return }
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

    /// Applies `changes` to `owner`'s blocks in order, in one transaction: all of them or, when the
    /// result would be over ``maxBlocks``, none. A block of the owner themselves is skipped. The
    /// owner gets an identity if they have none (they may be known only to the auth service).
    /// Returns the users whose block by `owner` was made or lifted.
    func apply(_ changes: [BlockChange], app: UUID, owner: String, logger: Logger) async throws -> Set<String> {
        try await write(logger: logger) { connection in
            try await connection.ensureIdentities(app: app, users: [owner], logger: logger)
            // Serializes the owner's blocks, as `block` does.
            try await connection.query(
                "SELECT 1 FROM sync.identities WHERE app_id = \(app) AND user_id = \(owner) FOR UPDATE", logger: logger)
            let rows = try await connection.query(
                "SELECT blocked_id FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(owner)", logger: logger)
            var before = Set<String>()
            for try await user in rows.decode(String.self) { before.insert(user) }
            var after = before
            var added: [String] = []
            for change in changes {
                let users = change.userIDs.filter { $0 != owner }
                switch change.operation {
                case .add:
                    after.formUnion(users)
                    added += users
                case .remove: after.subtract(users)
                case .set:
                    after = Set(users)
                    added += users
                }
            }
            guard after.count <= Self.maxBlocks else {
                throw APIError(.invalidOperation, "A user can block at most \(Self.maxBlocks) users.")
            }
            let lifted = Array(before.subtracting(after)).sorted()
            var made: [String] = []
            var seen = Set<String>()
            for user in added where after.contains(user) && !before.contains(user) && seen.insert(user).inserted {
                made.append(user)
            }
            if !lifted.isEmpty {
                try await connection.query(
                    """
                    DELETE FROM sync.blocks WHERE app_id = \(app) AND owner_id = \(owner) AND blocked_id = ANY(\(lifted))
                    """, logger: logger)
            }
            if !made.isEmpty {
                // A microsecond apart, so that the owner's list shows them in the order they came.
                try await connection.query(
                    """
                    INSERT INTO sync.blocks (app_id, owner_id, blocked_id, created_at)
                    SELECT \(app), \(owner), u, now() + n * interval '1 microsecond'
                    FROM unnest(\(made)::text[]) WITH ORDINALITY AS t(u, n)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            return Set(lifted + made)
        }
    }
}
