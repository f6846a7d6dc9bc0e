import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What participants do to messages they hold: receipts (a status only rises), mark-all-read,
/// their own tags, and deletion for everybody or from their own devices.
extension MessageRepository {
    /// Raises `user`'s status of a message; a status never goes down, and the sender has read
    /// their own message already. Every participant hears of a change.
    func addReceipt(
        app: UUID, user: String, message id: UUID, status: ReceiptStatus, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let (message, members) = try await visibleMessage(app: app, id: id, caller: .user(user), connection, logger)
        guard message.senderID != user, let own = members.first(where: { $0.userID == user }) else { return }
        let rows = try await connection.query(
            """
            INSERT INTO sync.receipts AS r (app_id, message_id, user_id, status, delivered_at, read_at)
            VALUES (\(app), \(id), \(user), \(status.rawValue), now(), CASE WHEN \(status.rawValue) = 2 THEN now() END)
            ON CONFLICT (message_id, user_id) DO UPDATE SET status = excluded.status, updated_at = now(),
                delivered_at = coalesce(r.delivered_at, excluded.delivered_at), read_at = coalesce(r.read_at, excluded.read_at)
                WHERE r.status < excluded.status
            RETURNING status
            """, logger: logger)
        var raised = false
        for try await _ in rows { raised = true }
        let before = Presenter.status(of: message, for: own, receipt: nil)
        guard raised, status > before else { return }
        // The current participants hear of it, and the reader's own devices even after a removal.
        try await connection.appendChange(
            app: app, users: Self.currentAnd(user, of: members), .updateStatus, conversation: message.conversationID,
            message: id, data: ["user_id": .string(user), "status": .string(status.name)], logger: logger)
    }

    /// Who hears of `user`'s receipt: the current participants, and `user` whether or not they
    /// still are one; only `user` when the conversation's receipts are switched off.
    static func currentAnd(_ user: String, of members: [ParticipantRecord]) -> [String] {
        guard members.first?.receiptsEnabled ?? true else { return [user] }
        return Array(Set(members.filter(\.isCurrent).map(\.userID)).union([user])).sorted()
    }

    /// Marks every message up to `position` (all of them without one) read for `user`.
    func markAllRead(app: UUID, user: String, conversation id: UUID, position: Int64?, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            let (conversation, members) = try await conversations.access(
                app: app, conversation: id, caller: .user(user), forWriting: false, connection, logger)
            guard let own = members.first(where: { $0.userID == user }) else { return }
            let limit = own.leftPosition ?? conversation.lastPosition
            let target = min(position ?? limit, limit)
            guard target > own.readPosition else { return }
            try await connection.query(
                """
                UPDATE sync.participants SET read_position = \(target), delivered_position = greatest(delivered_position, \(target))
                WHERE conversation_id = \(id) AND user_id = \(user)
                """, logger: logger)
            try await connection.appendChange(
                app: app, users: Self.currentAnd(user, of: members), .updateStatus, conversation: id,
                data: ["user_id": .string(user), "status": "read", "position": .number(Double(target))], logger: logger)
        }
    }

    // MARK: Deletion and tags

    /// Deletes a message for everybody (its sender, or the app's backend) or from the caller's
    /// devices only, which tags it `deleted` for them.
    func deleteMessage(app: UUID, caller: Caller, id: UUID, mode: ConversationRepository.DeletionMode, logger: Logger)
        async throws
    {
        try await write(logger: logger) { connection in
            let (message, members) = try await visibleMessage(app: app, id: id, caller: caller, connection, logger)
            switch (mode, caller.userID) {
            case (.myDevices, let user?):
                try await addTags(app: app, user: user, message: message, tags: ["deleted"], announce: false, connection, logger)
                try await connection.appendChange(
                    app: app, users: [user], .deleteMessage, conversation: message.conversationID, message: id,
                    data: ["mode": "my_devices"], logger: logger)
            default:
                if let user = caller.userID {
                    guard message.senderID == user else {
                        throw APIError(.accessDenied, "Only its sender can delete a message for all participants.")
                    }
                    guard members.contains(where: { $0.userID == user && $0.isCurrent }) else {
                        throw APIError(.accessDenied, "You are no longer a participant of this conversation.")
                    }
                }
                // Former participants who hold the message lose it too: it is gone for everybody.
                let holders = try await connection.usersSeeing(id, logger: logger)
                try await connection.query(
                    "UPDATE sync.messages SET deleted_at = now(), parts = '[]' WHERE id = \(id)", logger: logger)
                try await connection.appendChange(
                    app: app, users: Array(Set(members.filter(\.isCurrent).map(\.userID)).union(holders)).sorted(),
                    .deleteMessage, conversation: message.conversationID, message: id, data: ["mode": "all_participants"],
                    logger: logger)
            }
        }
    }

    /// Merges `tags` into the user's own tags of a message (a union: tags are only ever added).
    func addTags(
        app: UUID, user: String, message: MessageRecord, tags: [String], announce: Bool,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let rows = try await connection.query(
            """
            INSERT INTO sync.message_tags AS t (app_id, message_id, user_id, tags)
            VALUES (\(app), \(message.id), \(user), \(tags)::text[])
            ON CONFLICT (message_id, user_id) DO UPDATE
                SET tags = ARRAY(SELECT DISTINCT unnest(t.tags || excluded.tags) ORDER BY 1)
                WHERE NOT (t.tags @> excluded.tags)
            RETURNING tags
            """, logger: logger)
        var merged: [String]?
        for try await value in rows.decode([String].self) { merged = value }
        if announce, let merged {
            try await connection.appendChange(
                app: app, users: [user], .updateTags, conversation: message.conversationID, message: message.id,
                data: ["tags": .array(merged.map(JSONValue.string))], logger: logger)
        }
    }
}
