import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Following (reference 4.6): a user follows everyone they share or shared a conversation with
/// (implicitly, for good: written by a trigger with the membership, see migration 10) and whoever
/// they follow explicitly, who may have no identity yet. Followers may read the identity and get
/// its changes and presence pushed. Nobody follows themselves.
struct FollowRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The most users one user may follow explicitly; implicit follows do not count.
    static let maxExplicitFollows = 5000

    /// Follows `users` explicitly for `user`, all or none; returns those not followed before in
    /// any way (oneself left out). 422 `invalid_operation` naming `property` past the limit.
    func follow(app: UUID, user: String, users: [String], property: String, logger: Logger) async throws -> [String] {
        let others = Set(users).subtracting([user]).sorted()
        guard !others.isEmpty else { return [] }
        return try await write(logger: logger) { connection in
            // Serializes the user's follows so that the limit holds under concurrent requests.
            try await connection.query(
                "SELECT 1 FROM sync.identities WHERE app_id = \(app) AND user_id = \(user) FOR UPDATE", logger: logger)
            let rows = try await connection.query(
                """
                INSERT INTO sync.follows (app_id, user_id, followed_id)
                SELECT \(app), \(user), u FROM unnest(\(others)::text[]) AS u ORDER BY u
                ON CONFLICT DO NOTHING RETURNING followed_id
                """, logger: logger)
            var added: [String] = []
            for try await followed in rows.decode(String.self) { added.append(followed) }
            guard !added.isEmpty else { return [] }
            let counted = try await connection.query(
                "SELECT count(*) FROM sync.follows WHERE app_id = \(app) AND user_id = \(user) AND NOT implicit",
                logger: logger)
            for try await count in counted.decode(Int64.self) where count > Self.maxExplicitFollows {
                throw APIError(
                    .invalidOperation,
                    "A user follows at most \(Self.maxExplicitFollows) users explicitly; unfollow some first.",
                    property: property)
            }
            return added.sorted()
        }
    }

    /// Ends an explicit follow; false when `user` did not follow `followed`. A follow that comes
    /// from a conversation cannot end: 422 `invalid_operation` naming `property`.
    func unfollow(app: UUID, user: String, followed: String, property: String, logger: Logger) async throws -> Bool {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                """
                DELETE FROM sync.follows WHERE app_id = \(app) AND user_id = \(user) AND followed_id = \(followed)
                RETURNING implicit
                """, logger: logger)
            for try await implicit in rows.decode(Bool.self) {
                guard !implicit else {
                    // Thrown inside the transaction: the row stays.
                    throw APIError(
                        .invalidOperation,
                        "'\(followed)' is followed for sharing a conversation, which cannot be undone.",
                        property: property)
                }
                return true
            }
            return false
        }
    }

    /// Whether `user` follows `followed`.
    func follows(
        app: UUID, user: String, followed: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT 1 FROM sync.follows WHERE app_id = \(app) AND user_id = \(user) AND followed_id = \(followed)",
            logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Those of `users` whom `user` follows; with nil, everyone `user` follows.
    func followed(app: UUID, user: String, among users: [String]?, logger: Logger) async throws -> Set<String> {
        let rows = try await postgres.query(
            """
            SELECT followed_id FROM sync.follows
            WHERE app_id = \(app) AND user_id = \(user) AND (\(users)::text[] IS NULL OR followed_id = ANY(\(users)))
            """, logger: logger)
        var result = Set<String>()
        for try await followed in rows.decode(String.self) { result.insert(followed) }
        return result
    }

    /// Everyone who follows `user`.
    func followers(app: UUID, user: String, logger: Logger) async throws -> [String] {
        let rows = try await postgres.query(
            "SELECT user_id FROM sync.follows WHERE app_id = \(app) AND followed_id = \(user) ORDER BY user_id",
            logger: logger)
        var result: [String] = []
        for try await follower in rows.decode(String.self) { result.append(follower) }
        return result
    }

    /// A page of whom `user` follows, the latest follow first, after `fromID` (someone they
    /// follow; 422 naming `from_id` otherwise); and how many there are. With `identified`, only
    /// those who have an identity.
    func followed(
        app: UUID, user: String, identified: Bool, paging: IdentityPaging, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> (users: [String], total: Int) {
        if let from = paging.fromUser, try await !follows(app: app, user: user, followed: from, connection, logger) {
            throw APIError.invalid("from_id", "from_id names nobody you follow.")
        }
        let withIdentity =
            identified
            ? "AND EXISTS (SELECT 1 FROM sync.identities i WHERE i.app_id = f.app_id AND i.user_id = f.followed_id)" : ""
        let rows = try await connection.query(
            """
            SELECT f.followed_id FROM sync.follows f
            WHERE f.app_id = \(app) AND f.user_id = \(user) \(unescaped: withIdentity)
              AND (\(paging.fromUser)::text IS NULL OR (f.created_at, f.followed_id) < (
                  SELECT created_at, followed_id FROM sync.follows
                  WHERE app_id = \(app) AND user_id = \(user) AND followed_id = \(paging.fromUser)))
            ORDER BY f.created_at DESC, f.followed_id DESC LIMIT \(paging.pageSize)
            """, logger: logger)
        var users: [String] = []
        for try await followed in rows.decode(String.self) { users.append(followed) }
        let counted = try await connection.query(
            "SELECT count(*) FROM sync.follows f WHERE f.app_id = \(app) AND f.user_id = \(user) \(unescaped: withIdentity)",
            logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (users, total)
    }
}
