import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Messages: sending (and resending, last write wins), receipts, deletion and tags, and the
/// lists a participant sees.
struct MessageRepository: PostgresRepository {
    let postgres: PostgresClient
    var conversations: ConversationRepository { ConversationRepository(postgres: postgres) }
    private var identities: IdentityRepository { IdentityRepository(postgres: postgres) }

    enum Sender: Sendable, Equatable {
        case user(String)
        case system(name: String)

        var userID: String? {
            if case .user(let id) = self { return id }
            return nil
        }
    }

    enum SendOutcome: Sendable {
        case sent(SentMessage)
        case idInUse(UUID)
    }

    /// A message just stored, with what its first rendering needs: who was in the conversation
    /// and the sender's identity. Nobody has a receipt for it yet.
    struct SentMessage: Sendable {
        var record: MessageRecord
        var members: [String]
        var sender: IdentityRecord?
    }

    /// Sends a message: the next position of its conversation, a changelog entry for every
    /// current participant who did not block the sender, and the conversation back on the
    /// devices of those who had deleted it from theirs.
    func send(
        app: UUID, conversation: UUID, sender: Sender, id: UUID?, parts: ValidatedParts, notification: JSONValue?,
        logger: Logger
    ) async throws -> SendOutcome {
        let id = id ?? UUID()
        do {
            if case .user(let user) = sender, parts.contentIDs.isEmpty, !MessageResponse.isResponse(parts.parts),
                let sent = try await sendInOneStatement(
                    app: app, conversation: conversation, sender: user, id: id, parts: parts, notification: notification,
                    logger: logger)
            {
                return .sent(sent)
            }
            var sent = try await write(logger: logger) { connection in
                try await insertMessage(
                    app: app, conversation: conversation, sender: sender, id: id, parts: parts,
                    notification: notification, connection, logger)
            }
            if let user = sender.userID {
                sent.sender = try await read(logger: logger) { try await identities.identity(app: app, user: user, $0, logger) }
            }
            return .sent(sent)
        } catch let error as PSQLError where error.sqlState == "23505" {
            return .idInUse(id)
        }
    }

    /// The common case in one statement: a user who is a current participant sends inline
    /// parts into a conversation that nobody has deleted from their devices. The conversation
    /// row is locked first and the changelog counters after it, as in ``insertMessage``. The
    /// statement runs in an explicit transaction all the same: it is answered only once the
    /// commit is confirmed. Anything else returns nil and takes the general path, which also
    /// says what was wrong.
    private func sendInOneStatement(
        app: UUID, conversation: UUID, sender: String, id: UUID, parts: ValidatedParts, notification: JSONValue?,
        logger: Logger
    ) async throws -> SentMessage? {
        let statement = SendMessageStatement(
            app: app, conversation: conversation, sender: sender, id: id,
            parts: String(decoding: try JSONEncoder().encode(parts.parts), as: UTF8.self), notification: notification?.jsonText,
            offTheRecord: parts.offTheRecord)
        return try await write(logger: logger) { connection in
            var sent: SentMessage?
            for try await (position, sentAt, members, displayName, avatarURL, identityType) in try await connection.execute(
                statement, logger: logger)
            {
                var identity = IdentityRecord(userID: sender)
                identity.displayName = displayName
                identity.avatarURL = avatarURL
                identity.identityType = identityType ?? "user"
                let record = MessageRecord(
                    id: id, conversationID: conversation, position: position, senderID: sender, senderName: nil,
                    parts: parts.parts, notification: notification, sentAt: sentAt, updatedAt: nil, deletedAt: nil,
                    offTheRecord: parts.offTheRecord)
                sent = SentMessage(record: record, members: members, sender: identity)
            }
            return sent
        }
    }

    func insertMessage(
        app: UUID, conversation: UUID, sender: Sender, id: UUID, parts: ValidatedParts, notification: JSONValue?,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> SentMessage {
        // Taking the next position locks the conversation row until commit, which orders the
        // messages of one conversation; the members come back in the same round trip.
        let rows = try await connection.query(
            """
            WITH c AS (
                UPDATE sync.conversations SET last_position = last_position + 1, last_message_at = clock_timestamp()
                WHERE app_id = \(app) AND id = \(conversation) AND deleted_at IS NULL
                RETURNING id, last_position)
            SELECT c.last_position, p.user_id, p.left_position IS NULL, p.hidden,
                EXISTS (SELECT 1 FROM sync.blocks b
                        WHERE b.app_id = \(app) AND b.owner_id = p.user_id AND b.blocked_id = \(sender.userID))
            FROM c LEFT JOIN sync.participants p ON p.conversation_id = c.id
            """, logger: logger)
        var position: Int64?
        var recipients: [String] = []
        var members: [String] = []
        var unhidden: [String] = []
        var senderStatus: Bool?
        for try await (last, user, isCurrent, hidden, blocking) in rows.decode((Int64, String?, Bool?, Bool?, Bool).self) {
            position = last
            guard let user, let isCurrent else { continue }
            if user == sender.userID { senderStatus = isCurrent }
            if isCurrent { members.append(user) }
            guard isCurrent, !blocking else { continue }
            recipients.append(user)
            if hidden == true { unhidden.append(user) }
        }
        guard let position else { throw APIError.notFound("The conversation") }
        if sender.userID != nil {
            guard let senderStatus else { throw APIError.notFound("The conversation") }
            guard senderStatus else { throw APIError(.accessDenied, "You are no longer a participant of this conversation.") }
        }
        let partsText = String(decoding: try JSONEncoder().encode(parts.parts), as: UTF8.self)
        var senderName: String?
        if case .system(let name) = sender { senderName = name }
        let inserted = try await connection.query(
            """
            INSERT INTO sync.messages (
                app_id, id, conversation_id, position, sender_id, sender_name, parts, notification, off_the_record)
            VALUES (\(app), \(id), \(conversation), \(position), \(sender.userID), \(senderName), \(partsText)::jsonb,
                    \(notification?.jsonText)::jsonb, \(parts.offTheRecord))
            RETURNING sent_at
            """, logger: logger)
        var sentAt = Date()
        for try await time in inserted.decode(Date.self) { sentAt = time }
        if !unhidden.isEmpty {
            try await connection.query(
                "UPDATE sync.participants SET hidden = false WHERE conversation_id = \(conversation) AND user_id = ANY(\(unhidden))",
                logger: logger)
            try await connection.appendChange(
                app: app, users: unhidden, .newConversation, conversation: conversation, logger: logger)
        }
        try await connection.linkContent(parts.contentIDs, message: id, conversation: conversation, app: app, logger: logger)
        try await connection.appendChange(
            app: app, users: recipients, .newMessage, conversation: conversation, message: id, logger: logger)
        if let response = try MessageResponse.find(in: parts.parts) {
            guard let user = sender.userID else {
                throw APIError.invalid(response.property, "A response is a user's answer; the system sends none.")
            }
            try await connection.applyResponse(response, from: user, app: app, conversation: conversation, logger: logger)
        }
        let record = MessageRecord(
            id: id, conversationID: conversation, position: position, senderID: sender.userID, senderName: senderName,
            parts: parts.parts, notification: notification, sentAt: sentAt, updatedAt: nil, deletedAt: nil,
            offTheRecord: parts.offTheRecord)
        return SentMessage(record: record, members: members, sender: nil)
    }

    /// A message sent again under its id (from a device's queue): the last write wins, so its
    /// parts are replaced, and every participant hears of it again. Only its sender may do this.
    func replaceParts(
        app: UUID, message: MessageRecord, sender: String, parts: ValidatedParts, notification: JSONValue?,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard message.senderID == sender else {
            throw APIError(.idInUse, "The message id belongs to another sender's message.")
        }
        _ = try await conversations.access(
            app: app, conversation: message.conversationID, caller: .user(sender), forWriting: true, connection, logger)
        let partsText = String(decoding: try JSONEncoder().encode(parts.parts), as: UTF8.self)
        try await connection.query(
            """
            UPDATE sync.messages SET parts = \(partsText)::jsonb, notification = coalesce(\(notification?.jsonText)::jsonb, notification),
                off_the_record = \(parts.offTheRecord), updated_at = clock_timestamp()
            WHERE id = \(message.id)
            """, logger: logger)
        try await connection.linkContent(
            parts.contentIDs, message: message.id, conversation: message.conversationID, app: app, logger: logger)
        // Everyone who holds the message gets its new parts: former participants who saw it
        // included; not those who deleted it from their devices or blocked its sender.
        let holders = try await connection.usersSeeing(message.id, logger: logger)
        try await connection.appendChange(
            app: app, users: holders, .newMessage, conversation: message.conversationID, message: message.id, logger: logger)
    }

    /// The message if `caller` may see it (and the caller's participation), else 404.
    func visibleMessage(
        app: UUID, id: UUID, caller: Caller, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (MessageRecord, [ParticipantRecord]) {
        guard let message = try await connection.message(app: app, id: id, logger: logger) else {
            throw APIError.notFound("The message")
        }
        let members =
            try await connection.participants(app: app, of: [message.conversationID], logger: logger)[message.conversationID]
            ?? []
        if let user = caller.userID {
            guard let own = members.first(where: { $0.userID == user }), own.sees(position: message.position),
                try await connection.messageVisible(message.id, to: user, app: app, logger: logger)
            else { throw APIError.notFound("The message") }
        }
        return (message, members)
    }

    // MARK: Lists

    /// A page of the messages `viewer` sees in a conversation (all of them in the system view),
    /// newest first, before `fromID`; and how many there are.
    func messages(
        app: UUID, conversation: UUID, viewer: String?, fromID: UUID?, pageSize: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (records: [MessageRecord], total: Int) {
        var before: Int64 = .max
        if let fromID {
            let rows = try await connection.query(
                "SELECT position FROM sync.messages WHERE id = \(fromID) AND conversation_id = \(conversation)", logger: logger)
            var found: Int64?
            for try await position in rows.decode(Int64.self) { found = position }
            guard let found else { throw APIError.invalid("from_id", "from_id names no message of this conversation.") }
            before = found
        }
        let visible =
            viewer == nil
            ? "m.deleted_at IS NULL"
            : messageVisibleToParticipant
        let join = viewer == nil ? "" : "JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.user_id = $4"
        var binds = PostgresBindings()
        binds.append(conversation)
        binds.append(before)
        binds.append(Int64(pageSize))
        if let viewer { binds.append(viewer) }
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(MessageRecord.columns) FROM sync.messages m \(join)
                    WHERE m.conversation_id = $1 AND m.position < $2 AND \(visible)
                    ORDER BY m.position DESC LIMIT $3
                    """, binds: binds), logger: logger)
        var records: [MessageRecord] = []
        for try await row in rows { records.append(try MessageRecord(row: row)) }
        var countBinds = PostgresBindings()
        countBinds.append(conversation)
        if let viewer { countBinds.append(viewer) }
        let counted = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT count(*) FROM sync.messages m \(join.replacingOccurrences(of: "$4", with: "$2"))
                    WHERE m.conversation_id = $1 AND \(visible)
                    """, binds: countBinds), logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }
}

extension PostgresConnection {
    /// Records which rich content a message refers to, so its participants may fetch it.
    func linkContent(_ contentIDs: [UUID], message: UUID, conversation: UUID, app: UUID, logger: Logger) async throws {
        guard !contentIDs.isEmpty else { return }
        try await query(
            """
            INSERT INTO sync.message_content (app_id, content_id, message_id, conversation_id)
            SELECT \(app), cid, \(message), \(conversation) FROM unnest(\(contentIDs)::uuid[]) AS cid
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// The participants, current or former, who see the message: within the part of the history
    /// they see, not deleted from their devices, not from someone they blocked.
    func usersSeeing(_ id: UUID, logger: Logger) async throws -> [String] {
        let rows = try await query(
            """
            SELECT p.user_id FROM sync.messages m JOIN sync.participants p ON p.conversation_id = m.conversation_id
            WHERE m.id = \(id) AND NOT p.hidden AND \(unescaped: messageVisibleToParticipant)
            ORDER BY p.user_id
            """, logger: logger)
        var users: [String] = []
        for try await user in rows.decode(String.self) { users.append(user) }
        return users
    }

    /// Whether the message is neither deleted from `user`'s devices nor from someone they blocked.
    func messageVisible(_ id: UUID, to user: String, app: UUID, logger: Logger) async throws -> Bool {
        let rows = try await query(
            """
            SELECT 1 FROM sync.messages m JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.user_id = \(user)
            WHERE m.id = \(id) AND \(unescaped: messageVisibleToParticipant)
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
