import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// An announcement as stored: a message that belongs to no conversation, sent by the app's
/// backend to a list of recipients, each of whom reads, acknowledges and deletes their own copy.
struct AnnouncementRecord: Sendable {
    var id: UUID
    /// Announcements are numbered in the order they were sent, across the app.
    var position: Int64
    var senderID: String?
    var senderName: String?
    var parts: [StoredPart]
    var notification: JSONValue?
    var sentAt: Date

    static let columns =
        "a.id, a.position, a.sender_id, a.sender_name, a.parts::text, a.notification::text, a.sent_at"

    init(row: PostgresRow) throws {
        try self.init(row.decode((UUID, Int64, String?, String?, String, String?, Date).self))
    }

    /// From the values of ``columns``, in order.
    init(_ values: (UUID, Int64, String?, String?, String, String?, Date)) {
        let (id, position, senderID, senderName, parts, notification, sentAt) = values
        self.id = id
        self.position = position
        self.senderID = senderID
        self.senderName = senderName
        self.parts = (try? JSONDecoder().decode([StoredPart].self, from: Data(parts.utf8))) ?? []
        self.notification = notification.flatMap(JSONValue.init(jsonText:))
        self.sentAt = sentAt
    }
}

/// One announcement with the recipients whose status its viewer may see: every recipient in the
/// system view, only the viewer otherwise.
struct AnnouncementView: Sendable {
    var record: AnnouncementRecord
    var statuses: [(user: String, status: ReceiptStatus)]
}

struct AnnouncementRepository: PostgresRepository {
    let postgres: PostgresClient

    static let maxAnnouncementRecipients = 1000

    /// A checked announcement, ready to store under `id`.
    struct NewAnnouncement: Sendable {
        var id: UUID
        var recipients: [String]
        var sender: MessageRepository.Sender
        var parts: ValidatedParts
        var notification: JSONValue?
    }

    /// Sends an announcement. False, and nothing changed, when one with this id exists already
    /// (a repeated request). Recipients who never signed in get an identity, so that they find
    /// the announcement when they do; a sender who is also a recipient has read it.
    func createAnnouncement(app: UUID, _ new: NewAnnouncement, logger: Logger) async throws -> Bool {
        let partsText = String(decoding: try JSONEncoder().encode(new.parts.parts), as: UTF8.self)
        var senderName: String?
        if case .system(let name) = new.sender { senderName = name }
        return try await write(logger: logger) { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO sync.announcements (app_id, id, sender_id, sender_name, parts, notification)
                VALUES (\(app), \(new.id), \(new.sender.userID), \(senderName), \(partsText)::jsonb,
                        \(new.notification?.jsonText)::jsonb)
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """, logger: logger)
            var created = false
            for try await _ in inserted { created = true }
            guard created else { return false }
            try await connection.ensureIdentities(app: app, users: new.recipients, logger: logger)
            try await connection.query(
                """
                INSERT INTO sync.announcement_recipients (app_id, announcement_id, user_id, status)
                SELECT \(app), \(new.id), u, CASE WHEN u = \(new.sender.userID) THEN \(ReceiptStatus.read.rawValue)
                    ELSE \(ReceiptStatus.sent.rawValue) END
                FROM unnest(\(new.recipients)::text[]) AS u ORDER BY u
                """, logger: logger)
            return true
        }
    }

    /// The announcement as `viewer` sees it (nil: the system view, with every recipient). Users
    /// who did not receive it, or deleted it, get 404.
    func announcement(
        app: UUID, id: UUID, viewer: String?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> AnnouncementView {
        let rows = try await connection.query(
            "SELECT \(unescaped: AnnouncementRecord.columns) FROM sync.announcements a WHERE a.app_id = \(app) AND a.id = \(id)",
            logger: logger)
        var found: AnnouncementRecord?
        for try await row in rows { found = try AnnouncementRecord(row: row) }
        guard let record = found else { throw APIError.notFound("The announcement") }
        let statusRows = try await connection.query(
            """
            SELECT user_id, status FROM sync.announcement_recipients
            WHERE announcement_id = \(id) AND (\(viewer)::text IS NULL OR (user_id = \(viewer) AND deleted_at IS NULL))
            ORDER BY user_id
            """, logger: logger)
        var statuses: [(user: String, status: ReceiptStatus)] = []
        for try await (user, status) in statusRows.decode((String, Int16).self) {
            statuses.append((user, ReceiptStatus(rawValue: status) ?? .sent))
        }
        if viewer != nil, statuses.isEmpty { throw APIError.notFound("The announcement") }
        return AnnouncementView(record: record, statuses: statuses)
    }

    /// A page of `user`'s announcements, newest first, after `fromID`; and how many they have.
    func announcements(
        app: UUID, user: String, fromID: UUID?, pageSize: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (views: [AnnouncementView], total: Int) {
        var before = Int64.max
        if let fromID {
            let rows = try await connection.query(
                """
                SELECT a.position FROM sync.announcements a
                JOIN sync.announcement_recipients r ON r.announcement_id = a.id AND r.user_id = \(user)
                WHERE a.app_id = \(app) AND a.id = \(fromID)
                """, logger: logger)
            var found: Int64?
            for try await position in rows.decode(Int64.self) { found = position }
            guard let found else { throw APIError.invalid("from_id", "from_id names no announcement of yours.") }
            before = found
        }
        let rows = try await connection.query(
            """
            SELECT \(unescaped: AnnouncementRecord.columns), r.status FROM sync.announcement_recipients r
            JOIN sync.announcements a ON a.id = r.announcement_id
            WHERE r.app_id = \(app) AND r.user_id = \(user) AND r.deleted_at IS NULL AND a.position < \(before)
            ORDER BY a.position DESC LIMIT \(Int64(pageSize))
            """, logger: logger)
        var views: [AnnouncementView] = []
        for try await (id, position, senderID, senderName, parts, notification, sentAt, status) in rows.decode(
            (UUID, Int64, String?, String?, String, String?, Date, Int16).self)
        {
            let record = AnnouncementRecord((id, position, senderID, senderName, parts, notification, sentAt))
            views.append(AnnouncementView(record: record, statuses: [(user, ReceiptStatus(rawValue: status) ?? .sent)]))
        }
        let counted = try await connection.query(
            """
            SELECT count(*) FROM sync.announcement_recipients
            WHERE app_id = \(app) AND user_id = \(user) AND deleted_at IS NULL
            """, logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (views, total)
    }

    /// Removes the announcement from `user`'s list (404 if it is not in it).
    func deleteAnnouncement(app: UUID, user: String, id: UUID, logger: Logger) async throws {
        let rows = try await write(
            """
            UPDATE sync.announcement_recipients SET deleted_at = now()
            WHERE app_id = \(app) AND announcement_id = \(id) AND user_id = \(user) AND deleted_at IS NULL
            RETURNING user_id
            """, logger: logger)
        for _ in rows { return }
        throw APIError.notFound("The announcement")
    }

    /// Raises `user`'s status of the announcement; it never goes down (404 if it is not theirs).
    func addAnnouncementReceipt(app: UUID, user: String, id: UUID, status: ReceiptStatus, logger: Logger) async throws {
        let rows = try await write(
            """
            UPDATE sync.announcement_recipients SET status = greatest(status, \(status.rawValue))
            WHERE app_id = \(app) AND announcement_id = \(id) AND user_id = \(user) AND deleted_at IS NULL
            RETURNING user_id
            """, logger: logger)
        for _ in rows { return }
        throw APIError.notFound("The announcement")
    }
}
