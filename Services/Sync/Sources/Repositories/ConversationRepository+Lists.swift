import Crypto
import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The conversations a user lists: newest first by creation or by last message, paged.
extension ConversationRepository {
    enum ConversationOrder: String, Sendable {
        case createdAt = "created_at"
        case lastMessage = "last_message"
    }

    /// A page of `user`'s conversations, newest first, after `fromID`; and how many there are.
    func conversations(
        app: UUID, user: String, order: ConversationOrder, fromID: UUID?, pageSize: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (records: [ConversationRecord], total: Int) {
        // A former participant's conversation is as recent as the last message they saw in it.
        let key =
            order == .createdAt
            ? "c.created_at"
            : """
            coalesce(CASE WHEN p.left_position IS NULL THEN c.last_message_at ELSE (SELECT m.sent_at FROM sync.messages m
                WHERE m.conversation_id = c.id AND m.position = p.left_position) END, c.created_at)
            """
        let base = """
            FROM sync.conversations c JOIN sync.participants p ON p.conversation_id = c.id
            WHERE p.app_id = $1 AND p.user_id = $2 AND NOT p.hidden AND c.deleted_at IS NULL
            """
        var cursor = ""
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(user)
        binds.append(Int64(pageSize))
        if let fromID {
            guard try await connection.conversationExists(id: fromID, app: app, logger: logger) else {
                throw APIError.invalid("from_id", "from_id names no conversation of yours.")
            }
            cursor = """
                AND (\(key), c.id) < (SELECT \(key), c.id FROM sync.conversations c
                    LEFT JOIN sync.participants p ON p.conversation_id = c.id AND p.user_id = $2 WHERE c.id = $4)
                """
            binds.append(fromID)
        }
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT \(ConversationRecord.columns) \(base) \(cursor) ORDER BY \(key) DESC, c.id DESC LIMIT $3",
                binds: binds), logger: logger)
        var records: [ConversationRecord] = []
        for try await row in rows { records.append(try ConversationRecord(row: row)) }
        var countBinds = PostgresBindings()
        countBinds.append(app)
        countBinds.append(user)
        let counted = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) \(base)", binds: countBinds), logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }
}
