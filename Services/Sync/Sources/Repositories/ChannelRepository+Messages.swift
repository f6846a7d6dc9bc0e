import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The messages of channels: stored with conversation messages (see ``m0011Channels``), without
/// receipts or read state, seen by the members of their channel.
extension ChannelRepository {
    /// Sends a message to a channel: the channel's next position (its row stays locked until
    /// commit, which orders its messages and keeps a leaving sender out), and a changelog entry
    /// for every member but those who blocked the sender.
    func send(
        app: UUID, channel: UUID, sender: MessageRepository.Sender, id: UUID, parts: ValidatedParts, notification: JSONValue?,
        logger: Logger
    ) async throws -> MessageRepository.SendOutcome {
        let partsText = try parts.jsonText
        do {
            return try await write(logger: logger) { connection in
                let caller = sender.userID.map(Caller.user) ?? .app
                _ = try await access(
                    app: app, channel: channel, caller: caller, membersOnly: true, lock: true, connection, logger)
                let rows = try await connection.query(
                    """
                    WITH ch AS (
                        UPDATE sync.channels SET last_position = last_position + 1 WHERE id = \(channel) RETURNING last_position)
                    INSERT INTO sync.messages (
                        app_id, id, channel_id, position, sender_id, sender_name, parts, notification, off_the_record)
                    SELECT \(app), \(id), \(channel), ch.last_position, \(sender.userID), \(sender.systemName),
                        \(partsText)::jsonb, \(notification?.jsonText)::jsonb, \(parts.offTheRecord)
                    FROM ch
                    RETURNING position, sent_at
                    """, logger: logger)
                var stored: (position: Int64, sentAt: Date)?
                for try await (position, sentAt) in rows.decode((Int64, Date).self) { stored = (position, sentAt) }
                guard let stored else { throw APIError.notFound("The channel") }
                try await connection.linkContent(parts.contentIDs, message: id, conversation: channel, app: app, logger: logger)
                let members = try await connection.memberIDs(of: channel, logger: logger)
                var blocking = Set<String>()
                if let user = sender.userID {
                    blocking = try await connection.usersBlocking(user, among: members, app: app, logger: logger)
                }
                try await connection.appendChange(
                    app: app, users: members.filter { !blocking.contains($0) }, .newChannelMessage,
                    conversation: channel, message: id, logger: logger)
                let record = MessageRecord(
                    id: id, conversationID: channel, position: stored.position, senderID: sender.userID,
                    senderName: sender.systemName, parts: parts.parts, notification: notification, sentAt: stored.sentAt,
                    updatedAt: nil, deletedAt: nil, offTheRecord: parts.offTheRecord)
                return .sent(MessageRepository.SentMessage(record: record, members: members, sender: nil))
            }
        } catch let error as PSQLError where error.sqlState == "23505" {
            return .idInUse(id)
        }
    }

    /// A page of the messages of a channel, newest first, before `fromID`; and how many there
    /// are. A viewer does not see the messages of those they blocked.
    func messages(
        channel: UUID, viewer: String?, fromID: UUID?, pageSize: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (records: [MessageRecord], total: Int) {
        var before: Int64 = .max
        if let fromID {
            let rows = try await connection.query(
                "SELECT position FROM sync.messages WHERE id = \(fromID) AND channel_id = \(channel)", logger: logger)
            var found: Int64?
            for try await position in rows.decode(Int64.self) { found = position }
            guard let found else { throw APIError.invalid("from_id", "from_id names no message of this channel.") }
            before = found
        }
        let rows = try await connection.query(
            """
            SELECT \(unescaped: MessageRecord.channelColumns) FROM sync.messages m
            WHERE m.channel_id = \(channel) AND m.position < \(before) AND m.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = m.app_id AND b.owner_id = \(viewer) AND b.blocked_id = m.sender_id)
            ORDER BY m.position DESC LIMIT \(Int64(pageSize))
            """, logger: logger)
        var records: [MessageRecord] = []
        for try await row in rows { records.append(try MessageRecord(row: row)) }
        let counted = try await connection.query(
            """
            SELECT count(*) FROM sync.messages m
            WHERE m.channel_id = \(channel) AND m.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = m.app_id AND b.owner_id = \(viewer) AND b.blocked_id = m.sender_id)
            """, logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }

    /// A channel message that `caller` may see: the app sees every one of its channels; a user
    /// those of channels they are a member of, unless they blocked the sender. Anything else,
    /// and an id that is no channel message, is nil.
    func visibleMessage(
        app: UUID, id: UUID, caller: Caller, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> MessageRecord? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: MessageRecord.channelColumns) FROM sync.messages m
            JOIN sync.channels ch ON ch.id = m.channel_id AND ch.deleted_at IS NULL
            WHERE m.app_id = \(app) AND m.id = \(id) AND m.deleted_at IS NULL
              AND (\(caller.userID)::text IS NULL OR (
                  EXISTS (SELECT 1 FROM sync.channel_members cm WHERE cm.channel_id = m.channel_id AND cm.user_id = \(caller.userID))
                  AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                      WHERE b.app_id = m.app_id AND b.owner_id = \(caller.userID) AND b.blocked_id = m.sender_id)))
            """, logger: logger)
        for try await row in rows { return try MessageRecord(row: row) }
        return nil
    }

    /// Whether `id` is a message of a channel of `app` (whoever may see it).
    func isChannelMessage(app: UUID, id: UUID, logger: Logger) async throws -> Bool {
        let rows = try await postgres.query(
            "SELECT 1 FROM sync.messages WHERE app_id = \(app) AND id = \(id) AND channel_id IS NOT NULL", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Deletes a channel message for everybody: its sender while a member, the channel's owner,
    /// or the app's backend may. 404 for whoever may not see it.
    func deleteMessage(app: UUID, caller: Caller, id: UUID, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            guard let message = try await visibleMessage(app: app, id: id, caller: caller, connection, logger) else {
                throw APIError.notFound("The message")
            }
            let (_, own) = try await access(
                app: app, channel: message.conversationID, caller: caller, membersOnly: true, lock: true, connection, logger)
            if caller != .app, message.senderID != caller.userID, own?.role != .owner {
                throw APIError(.accessDenied, "Only its sender or the channel's owner can delete a channel message.")
            }
            try await connection.query(
                "UPDATE sync.messages SET deleted_at = now(), parts = '[]' WHERE id = \(id)", logger: logger)
            try await connection.appendChange(
                app: app, users: try await connection.memberIDs(of: message.conversationID, logger: logger),
                .deleteChannelMessage, conversation: message.conversationID, message: id, data: ["mode": "all_participants"],
                logger: logger)
        }
    }
}

extension MessageRepository.Sender {
    /// The name of a system sender of the Server API.
    var systemName: String? {
        if case .system(let name) = self { return name }
        return nil
    }
}

extension ValidatedParts {
    /// The parts as stored in a message row.
    var jsonText: String {
        get throws { String(decoding: try JSONEncoder().encode(parts), as: UTF8.self) }
    }
}
