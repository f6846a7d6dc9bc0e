import Foundation
import LayerModels
import Logging
import PostgresNIO

/// What `Presenter` loads to render objects, in batches (through ``PresenterReads``).
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
    func receipts(app: UUID, of messages: [UUID], logger: Logger) async throws -> [UUID: [String: Receipt]] {
        let rows = try await query(
            """
            SELECT message_id, user_id, status, delivered_at, read_at FROM sync.receipts
            WHERE app_id = \(app) AND message_id = ANY(\(messages))
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

extension PostgresConnection {
    /// Channel messages by id, deleted ones included (without their parts), as the changelog
    /// still names them.
    func channelMessages(ids: [UUID], logger: Logger) async throws -> [MessageRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT \(unescaped: MessageRecord.channelColumns) FROM sync.messages m
            WHERE m.id = ANY(\(ids)) AND m.channel_id IS NOT NULL
            """, logger: logger)
        var result: [MessageRecord] = []
        for try await row in rows { result.append(try MessageRecord(row: row)) }
        return result
    }
}

/// The reads a ``Presenter`` makes to render what it is given: the participants, identities,
/// receipts and counts its objects show, in batches, on one connection of the request's. The
/// presenter holds these, not the connection: it queries nothing else.
struct PresenterReads: Sendable {
    private let connection: PostgresConnection

    init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    func identities(app: UUID, users: [String], logger: Logger) async throws -> [IdentityRecord] {
        try await connection.identities(app: app, users: users, logger: logger)
    }

    func receipts(app: UUID, of messages: [UUID], logger: Logger) async throws -> [UUID: [String: Receipt]] {
        try await connection.receipts(app: app, of: messages, logger: logger)
    }

    func viewerStats(app: UUID, conversations: [UUID], viewer: String, logger: Logger) async throws -> [UUID: ViewerStats] {
        try await connection.viewerStats(app: app, conversations: conversations, viewer: viewer, logger: logger)
    }

    func participants(app: UUID, of conversations: [UUID], logger: Logger) async throws -> [UUID: [ParticipantRecord]] {
        try await connection.participants(app: app, of: conversations, logger: logger)
    }

    func messagesIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [MessageRecord] {
        try await connection.messagesIncludingDeleted(app: app, ids: ids, logger: logger)
    }

    func conversationsIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [ConversationRecord] {
        try await connection.conversationsIncludingDeleted(app: app, ids: ids, logger: logger)
    }

    func channelsIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [ChannelRecord] {
        try await connection.channelsIncludingDeleted(app: app, ids: ids, logger: logger)
    }

    func memberships(of channels: [UUID], users: [String], logger: Logger) async throws -> [MembershipRecord] {
        try await connection.memberships(of: channels, users: users, logger: logger)
    }

    func channelMessages(ids: [UUID], logger: Logger) async throws -> [MessageRecord] {
        try await connection.channelMessages(ids: ids, logger: logger)
    }
}
