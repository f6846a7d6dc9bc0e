import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Reading a user's changelog: everything after an anchor, or the latest state at anchor 0.
struct ChangelogRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The latest sequence number of `user`'s changelog.
    func lastSeq(app: UUID, user: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        let rows = try await connection.query(
            "SELECT last_seq FROM sync.user_seqs WHERE app_id = \(app) AND user_id = \(user)", logger: logger)
        for try await seq in rows.decode(Int64.self) { return seq }
        return 0
    }

    /// The operations after `anchor`, at most `limit`, and whether more follow.
    func changes(
        after anchor: Int64, limit: Int, presenter: inout Presenter, _ logger: Logger
    ) async throws -> (operations: [OperationObject], more: Bool) {
        guard let user = presenter.viewer else { return ([], false) }
        var entries = try await changelog(
            app: presenter.app, after: [(user, anchor)], limit: limit + 1, presenter.database, logger)
        let more = entries.count > limit
        entries = Array(entries.prefix(limit))
        return (try await presenter.operations(entries), more)
    }

    enum SyncPolicy: String, Sendable {
        case complete
        case unreadOnly = "unread_only"
        case partial
    }

    /// Where a paged snapshot stopped: conversations before `conversation` are done, and of that
    /// one, the messages up to `position` (-1: not even the conversation itself).
    struct SnapshotCursor: Sendable, Equatable {
        var seq: Int64
        var conversation: UUID
        var position: Int64

        init(seq: Int64, conversation: UUID, position: Int64) {
            self.seq = seq
            self.conversation = conversation
            self.position = position
        }

        init?(text: String) {
            let fields = text.split(separator: ".")
            guard fields.count == 4, fields[0] == "s", let seq = Int64(fields[1]), seq >= 0,
                let conversation = UUID(uuidString: String(fields[2])), let position = Int64(fields[3]), position >= -1
            else { return nil }
            self.init(seq: seq, conversation: conversation, position: position)
        }

        var text: String { "s.\(seq).\(conversation.lowercased).\(position)" }
    }

    /// The latest state, one operation per object: each conversation the user sees, followed by
    /// the messages the policy asks for, each with the user's own tags of it (an `update_tags`, as
    /// the changelog gave them). Tags of the older messages that the policy leaves out come too,
    /// so the user's state is whole whatever the policy; a message and its tags are never split
    /// between pages. Every operation carries the sequence number the state is as of; the changes
    /// after it come with the next anchor.
    func snapshot(
        cursor: SnapshotCursor?, seq: Int64, policy: SyncPolicy, partialCount: Int, limit: Int,
        presenter: inout Presenter, _ logger: Logger
    ) async throws -> (operations: [OperationObject], next: SnapshotCursor?) {
        guard let user = presenter.viewer else { return ([], nil) }
        let connection = presenter.database
        let start = cursor?.conversation ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await connection.query(
            """
            SELECT \(unescaped: ConversationRecord.columns) FROM sync.conversations c
            JOIN sync.participants p ON p.conversation_id = c.id
            WHERE p.app_id = \(presenter.app) AND p.user_id = \(user) AND NOT p.hidden AND c.deleted_at IS NULL
              AND c.id >= \(start)
            ORDER BY c.id LIMIT \(Int64(limit + 1))
            """, logger: logger)
        var records: [ConversationRecord] = []
        for try await row in rows { records.append(try ConversationRecord(row: row)) }

        var plan: [(conversation: ConversationRecord, emitConversation: Bool, messages: [SnapshotMessage])] = []
        var budget = limit
        var next: SnapshotCursor?
        for record in records {
            let resumed = cursor.map { $0.conversation == record.id && $0.position >= 0 } ?? false
            if !resumed {
                guard budget > 0 else {
                    next = SnapshotCursor(seq: seq, conversation: record.id, position: -1)
                    break
                }
                budget -= 1
            }
            let after = resumed ? cursor!.position : 0
            // Each row is worth one operation at least, so one more than the budget tells whether more follow.
            let wanted = try await snapshotMessages(
                conversation: record.id, user: user, policy: policy, partialCount: partialCount, after: after,
                limit: budget + 1, connection, logger)
            var taken: [SnapshotMessage] = []
            for message in wanted {
                // The first message of a page goes in even when it and its tags exceed a limit of 1.
                guard message.operationCount <= budget || budget == limit else { break }
                budget -= min(message.operationCount, budget)
                taken.append(message)
            }
            plan.append((record, !resumed, taken))
            if wanted.count > taken.count {
                next = SnapshotCursor(seq: seq, conversation: record.id, position: taken.last?.record.position ?? after)
                break
            }
        }
        let conversations = try await presenter.conversations(plan.filter(\.emitConversation).map(\.conversation))
        var byID: [UUID: ConversationObject] = [:]
        for (record, object) in zip(plan.filter(\.emitConversation).map(\.conversation), conversations) {
            byID[record.id] = object
        }
        let messageObjects = try await presenter.messages(plan.flatMap(\.messages).filter(\.inWindow).map(\.record))
        var messageIterator = messageObjects.makeIterator()
        var operations: [OperationObject] = []
        for step in plan {
            if step.emitConversation {
                operations.append(
                    OperationObject(
                        seq: seq, type: .newConversation, conversationID: step.conversation.id,
                        conversation: byID[step.conversation.id], data: [:]))
            }
            for message in step.messages {
                let record = message.record
                if message.inWindow {
                    operations.append(
                        OperationObject(
                            seq: seq, type: .newMessage, conversationID: record.conversationID, messageID: record.id,
                            message: messageIterator.next(), data: [:]))
                }
                if !message.tags.isEmpty {
                    operations.append(
                        OperationObject(
                            seq: seq, type: .updateTags, conversationID: record.conversationID, messageID: record.id,
                            data: ["tags": .array(message.tags.map(JSONValue.string))]))
                }
            }
        }
        return (operations, next)
    }

    /// A message of a snapshot: in the window the policy asks for (then the message itself goes
    /// out), or older but tagged by the user (then only the tags do).
    private struct SnapshotMessage {
        var record: MessageRecord
        var tags: [String]
        var inWindow: Bool

        var operationCount: Int { (inWindow ? 1 : 0) + (tags.isEmpty ? 0 : 1) }
    }

    /// The messages of one conversation that a snapshot includes, oldest first: those of the
    /// policy's window and, before it, those the user tagged.
    private func snapshotMessages(
        conversation: UUID, user: String, policy: SyncPolicy, partialCount: Int, after: Int64, limit: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [SnapshotMessage] {
        let from: String
        switch policy {
        case .complete:
            from = "0"
        case .partial:
            from = """
                coalesce((SELECT min(position) FROM (SELECT m.position FROM sync.messages m
                    WHERE m.conversation_id = p.conversation_id AND \(messageVisibleToParticipant)
                    ORDER BY m.position DESC LIMIT \(partialCount)) AS recent), 0)
                """
        case .unreadOnly:
            from = """
                coalesce(
                    (SELECT min(m.position) FROM sync.messages m
                     WHERE m.conversation_id = p.conversation_id AND m.position > p.read_position
                       AND m.sender_id IS DISTINCT FROM p.user_id AND \(messageVisibleToParticipant)
                       AND NOT EXISTS (SELECT 1 FROM sync.receipts r
                           WHERE r.message_id = m.id AND r.user_id = p.user_id AND r.status = 2)),
                    (SELECT max(m.position) FROM sync.messages m
                     WHERE m.conversation_id = p.conversation_id AND \(messageVisibleToParticipant)), 0)
                """
        }
        var binds = PostgresBindings()
        binds.append(conversation)
        binds.append(user)
        binds.append(after)
        binds.append(Int64(limit))
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(MessageRecord.columns), coalesce(t.tags, '{}'), m.position >= w.start
                    FROM sync.participants p
                    CROSS JOIN LATERAL (SELECT \(from) AS start) w
                    JOIN sync.messages m ON m.conversation_id = p.conversation_id
                    LEFT JOIN sync.message_tags t ON t.message_id = m.id AND t.user_id = p.user_id
                    WHERE p.conversation_id = $1 AND p.user_id = $2 AND m.position > $3
                      AND (m.position >= w.start OR cardinality(t.tags) > 0) AND \(messageVisibleToParticipant)
                    ORDER BY m.position LIMIT $4
                    """, binds: binds), logger: logger)
        var result: [SnapshotMessage] = []
        for try await row in rows {
            let (
                id, conversationID, position, senderID, senderName, parts, notification, sentAt, updatedAt, deletedAt, tags,
                inWindow
            ) =
                try row.decode((UUID, UUID, Int64, String?, String?, String, String?, Date, Date?, Date?, [String], Bool).self)
            let record = MessageRecord(
                id: id, conversationID: conversationID, position: position, senderID: senderID, senderName: senderName,
                parts: (try? storedJSONDecoder.decode([StoredPart].self, from: Data(parts.utf8))) ?? [],
                notification: notification.flatMap(JSONValue.init(jsonText:)), sentAt: sentAt, updatedAt: updatedAt,
                deletedAt: deletedAt)
            result.append(SnapshotMessage(record: record, tags: tags, inWindow: inWindow))
        }
        return result
    }
}

extension PostgresConnection {
    /// Conversations by id, deleted ones included (the changelog still names them).
    func conversationsIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [ConversationRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT \(unescaped: ConversationRecord.columns) FROM sync.conversations c
            WHERE c.app_id = \(app) AND c.id = ANY(\(ids))
            """, logger: logger)
        var result: [ConversationRecord] = []
        for try await row in rows { result.append(try ConversationRecord(row: row)) }
        return result
    }
}
