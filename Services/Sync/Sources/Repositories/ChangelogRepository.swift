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
        after anchor: Int64, limit: Int, presenter: inout Presenter, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (operations: [OperationObject], more: Bool) {
        guard let user = presenter.viewer else { return ([], false) }
        var entries = try await changelog(
            app: presenter.app, after: [(user, anchor)], limit: limit + 1, connection, logger)
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
    /// the messages the policy asks for, each `new_message` with the user's own tags of it (its
    /// `tags`, as the changelog's last `update_tags` gave them). Tags of the older messages that
    /// the policy leaves out come too, as an `update_tags` of each, so the user's state is whole
    /// whatever the policy. Every operation carries the sequence number the state is as of; the
    /// changes after it come with the next anchor.
    ///
    /// A page costs a few queries whatever the number of conversations on it: the messages of
    /// many conversations come in one query, for as many conversations as the participants' kept
    /// counts say will fill the page.
    func snapshot(
        cursor: SnapshotCursor?, seq: Int64, policy: SyncPolicy, partialCount: Int, limit: Int,
        presenter: inout Presenter, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (operations: [OperationObject], next: SnapshotCursor?) {
        guard let user = presenter.viewer else { return ([], nil) }
        let start = cursor?.conversation ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await connection.query(
            """
            SELECT \(unescaped: ConversationRecord.columns), p.message_count, p.unread_count
            FROM sync.conversations c
            JOIN sync.participants p ON p.conversation_id = c.id
            WHERE p.app_id = \(presenter.app) AND p.user_id = \(user) AND NOT p.hidden AND c.deleted_at IS NULL
              AND c.id >= \(start)
            ORDER BY c.id LIMIT \(Int64(limit + 1))
            """, logger: logger)
        var entries: [(record: ConversationRecord, after: Int64, resumed: Bool, estimate: Int)] = []
        for try await row in rows {
            let record = try ConversationRecord(row: row)
            let counts = row.makeRandomAccess()
            let total = Int(try counts[ConversationRecord.columnCount].decode(Int64.self))
            let unread = Int(try counts[ConversationRecord.columnCount + 1].decode(Int64.self))
            let resumed = cursor.map { $0.conversation == record.id && $0.position >= 0 } ?? false
            let window =
                switch policy {
                case .complete: total
                case .partial: min(partialCount, total)
                case .unreadOnly: max(unread, min(1, total))
                }
            entries.append((record, resumed ? cursor!.position : 0, resumed, (resumed ? 0 : 1) + window))
        }

        var plan: [(conversation: ConversationRecord, emitConversation: Bool, messages: [SnapshotMessage])] = []
        var budget = limit
        var next: SnapshotCursor?
        var index = entries.startIndex
        pages: while index < entries.endIndex {
            // The conversations the counts say will fill what is left of the page, one at least.
            var end = index
            var estimated = 0
            repeat {
                estimated += entries[end].estimate
                end += 1
            } while end < entries.endIndex && estimated <= budget
            let chunk = entries[index..<end]
            index = end
            // Each row is one operation, so one more than the budget tells whether more follow.
            let fetched = try await snapshotMessages(
                of: chunk.map { ($0.record.id, $0.after) }, user: user, policy: policy, partialCount: partialCount,
                limit: budget + 1, connection, logger)
            for entry in chunk {
                let record = entry.record
                if !entry.resumed {
                    guard budget > 0 else {
                        next = SnapshotCursor(seq: seq, conversation: record.id, position: -1)
                        break pages
                    }
                    budget -= 1
                }
                let wanted = (fetched[record.id] ?? []).prefix(budget + 1)
                var taken: [SnapshotMessage] = []
                for message in wanted {
                    guard budget > 0 else { break }
                    budget -= 1
                    taken.append(message)
                }
                plan.append((record, !entry.resumed, taken))
                if wanted.count > taken.count {
                    next = SnapshotCursor(
                        seq: seq, conversation: record.id, position: taken.last?.record.position ?? entry.after)
                    break pages
                }
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
                let tags: [String: JSONValue] = message.tags.isEmpty ? [:] : ["tags": .array(message.tags.map(JSONValue.string))]
                operations.append(
                    OperationObject(
                        seq: seq, type: message.inWindow ? .newMessage : .updateTags, conversationID: record.conversationID,
                        messageID: record.id, message: message.inWindow ? messageIterator.next() : nil, data: tags))
            }
        }
        return (operations, next)
    }

    /// A message of a snapshot, one operation: in the window the policy asks for (then the
    /// message goes out with its tags), or older but tagged by the user (then only the tags do).
    private struct SnapshotMessage {
        var record: MessageRecord
        var tags: [String]
        var inWindow: Bool
    }

    /// The messages of each conversation (after its position) that a snapshot includes, oldest
    /// first: at most `limit` of the policy's window and, before it, those the user tagged. One
    /// query for them all: the window through the position index from where it starts, the older
    /// tagged ones from the user's tags.
    private func snapshotMessages(
        of conversations: [(id: UUID, after: Int64)], user: String, policy: SyncPolicy, partialCount: Int, limit: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [UUID: [SnapshotMessage]] {
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
            // The first unread message, or else the last one: each found by walking the position
            // index from its end, where an aggregate would read every message.
            from = """
                coalesce(
                    (SELECT m.position FROM sync.messages m
                     WHERE m.conversation_id = p.conversation_id AND m.position > p.read_position
                       AND m.sender_id IS DISTINCT FROM p.user_id AND \(messageVisibleToParticipant)
                       AND NOT EXISTS (SELECT 1 FROM sync.receipts r
                           WHERE r.message_id = m.id AND r.user_id = p.user_id AND r.status = 2)
                     ORDER BY m.position LIMIT 1),
                    (SELECT m.position FROM sync.messages m
                     WHERE m.conversation_id = p.conversation_id AND \(messageVisibleToParticipant)
                     ORDER BY m.position DESC LIMIT 1), 0)
                """
        }
        var binds = PostgresBindings()
        binds.append(conversations.map(\.id))
        binds.append(conversations.map(\.after))
        binds.append(user)
        binds.append(Int64(limit))
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH page AS MATERIALIZED (
                        SELECT x.after, w.start, p.*
                        FROM unnest($1::uuid[], $2::bigint[]) AS x (id, after)
                        JOIN sync.participants p ON p.conversation_id = x.id AND p.user_id = $3
                        CROSS JOIN LATERAL (SELECT \(from) AS start) w)
                    SELECT \(MessageRecord.columns), coalesce(t.tags, '{}'), true
                    FROM page p
                    CROSS JOIN LATERAL (
                        SELECT m.* FROM sync.messages m
                        WHERE m.conversation_id = p.conversation_id AND m.position > p.after AND m.position >= p.start
                          AND \(messageVisibleToParticipant)
                        ORDER BY m.position LIMIT $4) m
                    LEFT JOIN sync.message_tags t ON t.message_id = m.id AND t.user_id = p.user_id
                    UNION ALL
                    SELECT \(MessageRecord.columns), t.tags, false
                    FROM page p
                    JOIN sync.message_tags t ON t.app_id = p.app_id AND t.user_id = p.user_id
                    JOIN sync.messages m ON m.id = t.message_id AND m.conversation_id = p.conversation_id
                    WHERE cardinality(t.tags) > 0 AND m.position > p.after AND m.position < p.start
                      AND \(messageVisibleToParticipant)
                    """, binds: binds), logger: logger)
        var result: [UUID: [SnapshotMessage]] = [:]
        for try await row in rows {
            let record = try MessageRecord(row: row)
            let extra = row.makeRandomAccess()
            let tags = try extra[MessageRecord.columnCount].decode([String].self)
            let inWindow = try extra[MessageRecord.columnCount + 1].decode(Bool.self)
            result[record.conversationID, default: []].append(
                SnapshotMessage(record: record, tags: tags, inWindow: inWindow))
        }
        // The joins keep no order.
        return result.mapValues { $0.sorted { $0.record.position < $1.record.position } }
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
