import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// A row of `sync.scheduled_messages`: a delayed send waiting under the id its message will have.
struct ScheduledMessageRecord: Sendable {
    var appID: UUID
    var id: UUID
    var conversationID: UUID
    var senderID: String?
    var senderName: String?
    var parts: [StoredPart]
    var notification: JSONValue?
    var offTheRecord: Bool
    var createdAt: Date
    var sendAt: Date
    /// When the sender's typing indicator starts; nil: none is shown.
    var typingFrom: Date?
    /// Whether the typing indicator has been said at least once.
    var typingStarted: Bool
    /// Whether it was time to send it when the row was read.
    var isDue: Bool

    var sender: MessageRepository.Sender { senderID.map { .user($0) } ?? .system(name: senderName ?? "") }

    static let columns = """
        s.app_id, s.id, s.conversation_id, s.sender_id, s.sender_name, s.parts::text, s.notification::text, s.created_at,
        s.send_at, s.typing_from, s.typing_started, s.send_at <= clock_timestamp(), s.off_the_record
        """

    init(row: PostgresRow) throws {
        let parts: String
        let notification: String?
        (
            appID, id, conversationID, senderID, senderName, parts, notification, createdAt, sendAt, typingFrom, typingStarted,
            isDue, offTheRecord
        ) = try row.decode((UUID, UUID, UUID, String?, String?, String, String?, Date, Date, Date?, Bool, Bool, Bool).self)
        self.parts = try JSONDecoder().decode([StoredPart].self, from: Data(parts.utf8))
        self.notification = notification.flatMap(JSONValue.init(jsonText:))
    }
}

/// Delayed sends: recording them, and the steps that carry them out. Any replica may take any
/// step: each claims its row with `FOR UPDATE SKIP LOCKED`, so one replica does it and the others
/// pass over it, and a send inserts the message and deletes the row in one transaction, under the
/// id fixed when the send was scheduled, so it happens once whoever crashes when.
struct ScheduledMessageRepository: PostgresRepository {
    let postgres: PostgresClient
    private var messages: MessageRepository { MessageRepository(postgres: postgres) }

    /// How often a typing indicator is said again while it lasts (reference 5.5: every 2.5 s).
    static let typingRepeat = 2.5

    struct NewScheduledMessage: Sendable {
        var app: UUID
        var id: UUID
        var conversation: UUID
        var sender: MessageRepository.Sender
        var parts: ValidatedParts
        var notification: JSONValue?
        var schedule: SendSchedule
    }

    /// Records a delayed send, timed from now by the database's clock. When its id is recorded
    /// already (a repeated request tag), the earlier one; nil when that one is no longer waiting.
    func schedule(_ new: NewScheduledMessage, logger: Logger) async throws -> ScheduledMessageRecord? {
        let parts = String(decoding: try JSONEncoder().encode(new.parts.parts), as: UTF8.self)
        var senderName: String?
        if case .system(let name) = new.sender { senderName = name }
        let delay = new.schedule.delay
        let typingOffset = new.schedule.typing.map { delay - $0 }
        let rows = try await write(
            """
            INSERT INTO sync.scheduled_messages AS s (
                app_id, id, conversation_id, sender_id, sender_name, parts, notification, created_at, send_at, typing_from,
                due_at, off_the_record)
            SELECT \(new.app), \(new.id), \(new.conversation), \(new.sender.userID), \(senderName), \(parts)::jsonb,
                \(new.notification?.jsonText)::jsonb, t.now, t.now + make_interval(secs => \(delay)),
                t.now + make_interval(secs => \(typingOffset)::float8),
                t.now + make_interval(secs => \(typingOffset ?? delay)), \(new.parts.offTheRecord)
            FROM (SELECT clock_timestamp() AS now) t
            ON CONFLICT (id) DO NOTHING
            RETURNING \(unescaped: ScheduledMessageRecord.columns)
            """, logger: logger)
        if let row = rows.first { return try ScheduledMessageRecord(row: row) }
        return try await scheduled(app: new.app, id: new.id, logger: logger)
    }

    /// The delayed send of `app` with this id, if it is still waiting.
    func scheduled(app: UUID, id: UUID, logger: Logger) async throws -> ScheduledMessageRecord? {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: ScheduledMessageRecord.columns) FROM sync.scheduled_messages s
            WHERE s.app_id = \(app) AND s.id = \(id)
            """, logger: logger)
        for try await row in rows { return try ScheduledMessageRecord(row: row) }
        return nil
    }

    /// Seconds until some delayed send (of any app) is due for its next step, by the database's
    /// clock (0 when one is overdue); nil when none waits. (Not `greatest(…, 0)` in SQL: it ignores
    /// a NULL, and an empty table would read as a send due now, polled for ever.)
    func secondsUntilNextStep(logger: Logger) async throws -> Double? {
        let rows = try await postgres.query(
            "SELECT extract(epoch FROM min(due_at) - clock_timestamp())::float8 FROM sync.scheduled_messages",
            logger: logger)
        for try await seconds in rows.decode(Double?.self) { return seconds.map { max($0, 0) } }
        return nil
    }

    /// What one step did.
    enum Step: Sendable {
        /// Nothing was due (or what was due is another replica's now).
        case idle
        /// The typing indicator of this send is to be said (again) now.
        case typing(ScheduledMessageRecord)
        /// The message was sent.
        case sent(ScheduledMessageRecord, MessageRepository.SentMessage)
        /// The message was not sent and never will be: the conversation is gone or the sender
        /// no longer in it.
        case dropped(ScheduledMessageRecord, reason: String)
        /// A message with its id exists already; the row was left over.
        case alreadySent(ScheduledMessageRecord)
        /// Sending failed for another reason (a bug, not the request): it is tried again after
        /// ``retryDelay``, and the sends due after it go first meanwhile.
        case failed(ScheduledMessageRecord, any Error)
    }

    static let retryDelay = 5.0

    /// Takes the next step of the delayed send due first that no other replica holds, in one
    /// transaction: says when to show its typing indicator again, or sends it, or drops it.
    func step(logger: Logger) async throws -> Step {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: ScheduledMessageRecord.columns) FROM sync.scheduled_messages s
                WHERE s.due_at <= clock_timestamp()
                ORDER BY s.due_at LIMIT 1
                FOR UPDATE SKIP LOCKED
                """, logger: logger)
            var claimed: ScheduledMessageRecord?
            for try await row in rows { claimed = try ScheduledMessageRecord(row: row) }
            guard let record = claimed else { return .idle }
            guard record.isDue else {
                try await connection.query(
                    """
                    UPDATE sync.scheduled_messages
                    SET typing_started = typing_from IS NOT NULL,
                        due_at = CASE WHEN typing_from IS NULL THEN send_at
                                      ELSE least(clock_timestamp() + make_interval(secs => \(Self.typingRepeat)), send_at) END
                    WHERE id = \(record.id)
                    """, logger: logger)
                return record.typingFrom == nil ? .idle : .typing(record)
            }
            let step = try await send(record, connection, logger)
            if case .failed = step {
                try await connection.query(
                    """
                    UPDATE sync.scheduled_messages SET due_at = clock_timestamp() + make_interval(secs => \(Self.retryDelay))
                    WHERE id = \(record.id)
                    """, logger: logger)
            } else {
                try await connection.query("DELETE FROM sync.scheduled_messages WHERE id = \(record.id)", logger: logger)
            }
            return step
        }
    }

    /// Sends a claimed delayed send through the normal send path, inside the claim's transaction.
    /// Whatever makes that refuse it (the conversation deleted, the sender removed) is undone and
    /// the send dropped; whatever else fails in it is undone and reported.
    private func send(
        _ record: ScheduledMessageRecord, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Step {
        let existing = try await connection.query("SELECT 1 FROM sync.messages WHERE id = \(record.id)", logger: logger)
        for try await _ in existing { return .alreadySent(record) }
        try await connection.query("SAVEPOINT scheduled_send", logger: logger)
        do {
            let sent = try await messages.insertMessage(
                app: record.appID, conversation: record.conversationID, sender: record.sender, id: record.id,
                parts: ValidatedParts(parts: record.parts, offTheRecord: record.offTheRecord), notification: record.notification,
                connection, logger)
            try await connection.query("RELEASE SAVEPOINT scheduled_send", logger: logger)
            return .sent(record, sent)
        } catch let error as APIError {
            try await connection.query("ROLLBACK TO SAVEPOINT scheduled_send", logger: logger)
            return .dropped(record, reason: error.body.message)
        } catch let error as PSQLError where error.sqlState == "23505" {
            try await connection.query("ROLLBACK TO SAVEPOINT scheduled_send", logger: logger)
            return .alreadySent(record)
        } catch {
            // A lost connection fails the rollback too, and the whole step with it.
            try await connection.query("ROLLBACK TO SAVEPOINT scheduled_send", logger: logger)
            return .failed(record, error)
        }
    }

    /// Who hears the typing indicator of a delayed send: the conversation's current participants
    /// but its sender and those who blocked the sender. Nil when the conversation is gone, or, if
    /// `senderMustBeIn`, when the sender is no longer in it.
    func typingAudience(of record: ScheduledMessageRecord, senderMustBeIn: Bool, logger: Logger) async throws -> [String]? {
        try await read(logger: logger) { connection in
            guard try await connection.conversation(app: record.appID, id: record.conversationID, logger: logger) != nil
            else { return nil }
            let members = try await DeviceRepository(postgres: postgres).currentParticipants(
                app: record.appID, conversation: record.conversationID, connection, logger)
            guard let sender = record.senderID else { return members }
            if senderMustBeIn, !members.contains(sender) { return nil }
            let others = members.filter { $0 != sender }
            let blocking = try await connection.usersBlocking(sender, among: others, app: record.appID, logger: logger)
            return others.filter { !blocking.contains($0) }
        }
    }
}
