import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// One row of a user's changelog.
struct ChangeEntry: Sendable {
    let user: String
    let seq: Int64
    let type: ChangeType
    let conversation: UUID?
    let message: UUID?
    let data: [String: JSONValue]
    /// When it was logged, ISO 8601 to the microsecond; strictly increasing per user.
    let timestamp: String
}

/// Reading changelogs and rendering their rows, for `POST /sync` (one user) and for push (every
/// user with devices waiting, in one batch).
extension ChangelogRepository {
    /// Each user's changes after their seq, at most `limit` per user, in seq order per user.
    func changelog(
        app: UUID, after positions: [(user: String, seq: Int64)], limit: Int, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> [ChangeEntry] {
        guard !positions.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT w.usr, c.seq, c.type, c.conversation_id, c.message_id, c.data::text,
                to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
            FROM unnest(\(positions.map(\.user)), \(positions.map(\.seq))) AS w(usr, after)
            CROSS JOIN LATERAL (
                SELECT * FROM sync.changelog c
                WHERE c.app_id = \(app) AND c.user_id = w.usr AND c.seq > w.after
                ORDER BY c.seq LIMIT \(Int64(limit))) AS c
            ORDER BY w.usr, c.seq
            """, logger: logger)
        var entries: [ChangeEntry] = []
        for try await (user, seq, type, conversation, message, data, timestamp) in rows.decode(
            (String, Int64, String, UUID?, UUID?, String?, String).self)
        {
            guard let type = ChangeType(rawValue: type) else { continue }
            var fields: [String: JSONValue] = [:]
            if let data, case .object(let object)? = JSONValue(jsonText: data) { fields = object }
            entries.append(
                ChangeEntry(
                    user: user, seq: seq, type: type, conversation: conversation, message: message, data: fields,
                    timestamp: timestamp))
        }
        return entries
    }

    /// The first seq of `user`'s changelog logged after `time` (an ISO 8601 text, compared to the
    /// microsecond), if any.
    func firstSeq(app: UUID, user: String, after time: String, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> Int64?
    {
        let rows = try await connection.query(
            """
            SELECT min(seq) FROM sync.changelog
            WHERE app_id = \(app) AND user_id = \(user) AND created_at > \(time)::timestamptz
            """, logger: logger)
        for try await seq in rows.decode(Int64?.self) { return seq }
        return nil
    }

    /// Each (conversation, user)'s unread message count.
    func unreadCounts(
        app: UUID, _ pairs: Set<ConversationUser>, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [ConversationUser: Int] {
        guard !pairs.isEmpty else { return [:] }
        let list = Array(pairs)
        let rows = try await connection.query(
            """
            SELECT p.conversation_id, p.user_id, p.unread_count
            FROM unnest(\(list.map(\.conversation)), \(list.map(\.user))) AS w(conversation, usr)
            JOIN sync.participants p ON p.conversation_id = w.conversation AND p.user_id = w.usr AND p.app_id = \(app)
            """, logger: logger)
        var result: [ConversationUser: Int] = [:]
        for try await (conversation, user, count) in rows.decode((UUID, String, Int64).self) {
            result[ConversationUser(conversation: conversation, user: user)] = Int(count)
        }
        return result
    }
}

struct ConversationUser: Hashable, Sendable {
    let conversation: UUID
    let user: String
}
