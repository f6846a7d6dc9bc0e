import Foundation
import LayerModels
import Logging
import PostgresNIO

/// What `Presenter` loads to render objects, in batches, on the connection it renders with.
extension PostgresConnection {
    /// The identity rows of those of `users` who have one.
    func identities(app: UUID, users: [String], logger: Logger) async throws -> [IdentityRecord] {
        let rows = try await query(
            "SELECT \(unescaped: IdentityRecord.columns) FROM sync.identities WHERE app_id = \(app) AND user_id = ANY(\(users))",
            logger: logger)
        var result: [IdentityRecord] = []
        for try await row in rows { result.append(try IdentityRecord(row: row)) }
        return result
    }

    /// Each message's receipts, by user.
    func receipts(of messages: [UUID], logger: Logger) async throws -> [UUID: [String: Receipt]] {
        let rows = try await query(
            """
            SELECT message_id, user_id, status, delivered_at, read_at FROM sync.receipts WHERE message_id = ANY(\(messages))
            """, logger: logger)
        var result: [UUID: [String: Receipt]] = [:]
        for try await (message, user, status, delivered, read) in rows.decode((UUID, String, Int16, Date?, Date?).self) {
            result[message, default: [:]][user] = Receipt(
                status: ReceiptStatus(rawValue: status) ?? .sent, deliveredAt: delivered, readAt: read)
        }
        return result
    }

    /// What one viewer sees of each conversation: how many messages, how many unread (kept in their
    /// participant row, see ``m0008ParticipantCounts``), the last one.
    func viewerStats(app: UUID, conversations: [UUID], viewer: String, logger: Logger) async throws -> [UUID: ViewerStats] {
        let rows = try await query(
            """
            SELECT p.conversation_id, p.message_count, p.unread_count,
                (SELECT m.id FROM sync.messages m
                 WHERE m.conversation_id = p.conversation_id AND \(unescaped: messageVisibleToParticipant)
                 ORDER BY m.position DESC LIMIT 1)
            FROM sync.participants p
            WHERE p.app_id = \(app) AND p.user_id = \(viewer) AND p.conversation_id = ANY(\(conversations))
            """, logger: logger)
        var result: [UUID: ViewerStats] = [:]
        for try await (id, total, unread, last) in rows.decode((UUID, Int64, Int64, UUID?).self) {
            result[id] = ViewerStats(total: Int(total), unread: Int(unread), lastMessageID: last)
        }
        return result
    }
}

struct ViewerStats: Sendable {
    var total: Int
    var unread: Int
    var lastMessageID: UUID?
}
