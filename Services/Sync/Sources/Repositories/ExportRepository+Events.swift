import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The events of an app as an export lists them, rebuilt from what the sync schema keeps:
/// conversations (created, deleted for everybody), the history of their participants and
/// metadata, messages (sent, deleted for everybody) and receipts (delivered, read).
extension ExportRepository {
    /// One event row: when, what, and who did it when that is known.
    struct EventRow: Sendable {
        var event: ExportEvent
        var at: Date
        var conversationID: UUID
        var messageID: UUID?
        var actorID: String?
        var actorName: String?
        var added: [String]
        var removed: [String]
        var conversationCreatedAt: Date
        var isDistinct: Bool
        /// The conversation's participants and metadata as they were at the event (conversation
        /// events only).
        var participants: [String]
        var metadata: JSONValue
        /// The message of a message event (its parts are gone once it was deleted).
        var message: Message?

        struct Message: Sendable {
            var position: Int64
            var parts: [StoredPart]
            var sentAt: Date
            var senderID: String?
            var senderName: String?
            var notification: JSONValue?
            var offTheRecord: Bool
        }
    }

    /// Calls `each` with every event of `events` in [since, until) in time order, read in one
    /// consistent snapshot.
    func events(
        app: UUID, events: [ExportEvent], since: Date?, until: Date, logger: Logger,
        _ each: (EventRow) async throws -> Void
    ) async throws {
        let selected = ExportEvent.allCases.filter(events.contains)
        guard !selected.isEmpty else { return }
        let from = since ?? Date(timeIntervalSince1970: 0)
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(from)
        binds.append(until)
        let union = selected.map(\.selectSQL).joined(separator: "\nUNION ALL\n")
        let sql = """
            SELECT e.at, e.kind, e.conversation_id, e.message_id, e.actor_id, e.actor_name,
                coalesce(e.added, '{}'), coalesce(e.removed, '{}'),
                CASE WHEN e.message_id IS NULL THEN (
                    SELECT coalesce(array_agg(h.user_id ORDER BY h.id), '{}') FROM (
                        SELECT DISTINCT ON (h.user_id) h.id, h.user_id, h.added FROM sync.participant_changes h
                        WHERE h.conversation_id = e.conversation_id AND h.changed_at <= e.at
                        ORDER BY h.user_id, h.changed_at DESC, h.id DESC) h
                    WHERE h.added) END,
                CASE WHEN e.message_id IS NULL THEN coalesce((
                    SELECT h.metadata::text FROM sync.metadata_changes h
                    WHERE h.conversation_id = e.conversation_id AND h.changed_at <= e.at
                    ORDER BY h.changed_at DESC, h.id DESC LIMIT 1), c.metadata::text) END,
                c.created_at, c.is_distinct,
                m.position, m.parts::text, m.sent_at, m.sender_id, m.sender_name, m.notification::text, m.off_the_record
            FROM (\(union)) AS e(ord, kind, at, conversation_id, message_id, actor_id, actor_name, added, removed)
            JOIN sync.conversations c ON c.id = e.conversation_id
            LEFT JOIN sync.messages m ON m.id = e.message_id
            ORDER BY e.at, e.ord, e.conversation_id, e.message_id, e.actor_id
            """
        try await postgres.withTransaction(logger: logger) { connection in
            // One snapshot for the whole archive, however long it takes to read.
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
            for try await row in rows {
                try await each(try EventRow(row: row))
            }
        }
    }
}

extension ExportRepository.EventRow {
    init(row: PostgresRow) throws {
        let cells = row.makeRandomAccess()
        at = try cells[0].decode(Date.self)
        guard let event = ExportEvent(rawValue: try cells[1].decode(String.self)) else {
            throw APIError(.internalServerError, "An export read an unknown kind of event.")
        }
        self.event = event
        conversationID = try cells[2].decode(UUID.self)
        messageID = try cells[3].decode(UUID?.self)
        actorID = try cells[4].decode(String?.self)
        actorName = try cells[5].decode(String?.self)
        added = try cells[6].decode([String].self)
        removed = try cells[7].decode([String].self)
        participants = try cells[8].decode([String]?.self) ?? []
        metadata = try cells[9].decode(String?.self).flatMap { JSONValue(jsonText: $0) } ?? [:]
        conversationCreatedAt = try cells[10].decode(Date.self)
        isDistinct = try cells[11].decode(Bool.self)
        if messageID != nil, let position = try cells[12].decode(Int64?.self) {
            message = Message(
                position: position,
                parts: try cells[13].decode(String.self).data(using: .utf8).flatMap {
                    try? storedJSONDecoder.decode([StoredPart].self, from: $0)
                } ?? [],
                sentAt: try cells[14].decode(Date.self), senderID: try cells[15].decode(String?.self),
                senderName: try cells[16].decode(String?.self),
                notification: try cells[17].decode(String?.self).flatMap { JSONValue(jsonText: $0) },
                offTheRecord: try cells[18].decode(Bool.self))
        }
    }
}

/// The events an export can hold: the version 1.0 webhook events.
enum ExportEvent: String, CaseIterable, Sendable {
    case conversationCreated = "conversation.created"
    case conversationUpdatedParticipants = "conversation.updated.participants"
    case conversationUpdatedMetadata = "conversation.updated.metadata"
    case messageSent = "message.sent"
    case messageDelivered = "message.delivered"
    case messageRead = "message.read"
    case messageDeleted = "message.deleted"
    case conversationDeleted = "conversation.deleted"

    static var allNames: [String] { allCases.map(\.rawValue) }

    /// Where they come from. Columns: ord, kind, at, conversation_id, message_id, actor_id,
    /// actor_name, added, removed; $1 is the app, [$2, $3) the time window. Events at the same
    /// instant come in the order of this list.
    var selectSQL: String {
        let ord = Self.allCases.firstIndex(of: self)!
        let head = "SELECT \(ord), '\(rawValue)'::text,"
        let none = "NULL::text[], NULL::text[]"
        switch self {
        case .conversationCreated:
            return """
                \(head) c.created_at, c.id, NULL::uuid, c.created_by, NULL::text, \(none)
                FROM sync.conversations c WHERE c.app_id = $1 AND c.created_at >= $2 AND c.created_at < $3
                """
        case .conversationUpdatedParticipants:
            // The participants a conversation started with are part of its creation.
            return """
                \(head) p.changed_at, p.conversation_id, NULL::uuid, NULL::text, NULL::text,
                    array_agg(p.user_id ORDER BY p.id) FILTER (WHERE p.added),
                    array_agg(p.user_id ORDER BY p.id) FILTER (WHERE NOT p.added)
                FROM sync.participant_changes p JOIN sync.conversations c ON c.id = p.conversation_id
                WHERE p.app_id = $1 AND p.changed_at >= $2 AND p.changed_at < $3 AND p.changed_at > c.created_at
                GROUP BY p.conversation_id, p.changed_at
                """
        case .conversationUpdatedMetadata:
            return """
                \(head) h.changed_at, h.conversation_id, NULL::uuid, NULL::text, NULL::text, \(none)
                FROM sync.metadata_changes h
                WHERE h.app_id = $1 AND NOT h.initial AND h.changed_at >= $2 AND h.changed_at < $3
                """
        case .conversationDeleted:
            return """
                \(head) c.deleted_at, c.id, NULL::uuid, NULL::text, NULL::text, \(none)
                FROM sync.conversations c WHERE c.app_id = $1 AND c.deleted_at >= $2 AND c.deleted_at < $3
                """
        case .messageSent:
            return """
                \(head) m.sent_at, m.conversation_id, m.id, m.sender_id, m.sender_name, \(none)
                FROM sync.messages m WHERE m.app_id = $1 AND m.sent_at >= $2 AND m.sent_at < $3
                  AND m.conversation_id IS NOT NULL
                """
        case .messageDeleted:
            return """
                \(head) m.deleted_at, m.conversation_id, m.id, NULL::text, NULL::text, \(none)
                FROM sync.messages m WHERE m.app_id = $1 AND m.deleted_at >= $2 AND m.deleted_at < $3
                  AND m.conversation_id IS NOT NULL
                """
        case .messageDelivered, .messageRead:
            let column = self == .messageRead ? "r.read_at" : "r.delivered_at"
            return """
                \(head) \(column), m.conversation_id, m.id, r.user_id, NULL::text, \(none)
                FROM sync.receipts r JOIN sync.messages m ON m.id = r.message_id
                WHERE r.app_id = $1 AND \(column) >= $2 AND \(column) < $3
                """
        }
    }
}
