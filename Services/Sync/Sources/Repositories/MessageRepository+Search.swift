import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What `GET /search` asks for: words, each matched as a word prefix, and the filters.
struct MessageSearch: Sendable {
    /// The words, as they were typed; PostgreSQL lower-cases them and strips their accents.
    var words: [String]
    var conversation: UUID?
    var sender: String?
    var mimeType: String?
    var from: Date?
    var to: Date?

    /// The `tsquery` of the words: every one must start a word of the message. Only letters and
    /// digits reach it, so nothing in it is an operator.
    var query: String { words.map { "\($0):*" }.joined(separator: " & ") }
}

extension MessageRepository {
    /// `Layer-Count` of a search counts the matches up to this many: counting a word found in a
    /// million messages would cost seconds, each match checked against the viewer's
    /// participation, deletions and blocks.
    static let maxSearchCount = 1000

    /// A page of the messages `viewer` sees whose text holds the words, newest first, before
    /// `fromID`; and how many there are, up to ``maxSearchCount``. The messages of the viewer's
    /// conversations, as the conversation's list shows them to the viewer: not before they joined
    /// a conversation's visible history or after they left it, not deleted for them, not from a
    /// user they block.
    func search(
        app: UUID, viewer: String, _ search: MessageSearch, fromID: UUID?, pageSize: Int, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> (records: [MessageRecord], total: Int) {
        var before: (Date, UUID)?
        if let fromID {
            let rows = try await connection.query(
                "SELECT sent_at FROM sync.messages WHERE app_id = \(app) AND id = \(fromID)", logger: logger)
            for try await sentAt in rows.decode(Date.self) { before = (sentAt, fromID) }
            guard before != nil else { throw APIError.invalid("from_id", "from_id names no message.") }
        }
        let parts = search.mimeType.map { #"[{"mime_type":"# + JSONValue.string($0).jsonText + "}]" }
        // Absent filters are NULL and fall away in the plan of each query.
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(viewer)
        binds.append(search.query)
        binds.appendOptional(search.conversation)
        binds.appendOptional(search.sender)
        binds.appendOptional(parts)
        binds.appendOptional(search.from)
        binds.appendOptional(search.to)
        let matching = """
            FROM sync.participants p
            JOIN sync.messages m ON m.app_id = p.app_id AND m.conversation_id = p.conversation_id
            WHERE p.app_id = $1 AND p.user_id = $2
              AND m.words @@ to_tsquery('pg_catalog.simple', sync.unaccented($3))
              AND ($4::uuid IS NULL OR m.conversation_id = $4::uuid)
              AND ($5::text IS NULL OR m.sender_id = $5::text)
              AND ($6::jsonb IS NULL OR m.parts @> $6::jsonb)
              AND ($7::timestamptz IS NULL OR m.sent_at >= $7::timestamptz)
              AND ($8::timestamptz IS NULL OR m.sent_at < $8::timestamptz)
              AND \(messageVisibleToParticipant)
            """
        var countBinds = binds
        binds.appendOptional(before?.0)
        binds.appendOptional(before?.1)
        binds.append(Int64(pageSize))
        let page = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(MessageRecord.columns) \(matching)
                      AND ($9::timestamptz IS NULL OR (m.sent_at, m.id) < ($9::timestamptz, $10::uuid))
                    ORDER BY m.sent_at DESC, m.id DESC LIMIT $11
                    """, binds: binds), logger: logger)
        var records: [MessageRecord] = []
        for try await row in page { records.append(try MessageRecord(row: row)) }
        // A first page that is not full holds every match; otherwise they are counted, up to a bound.
        if fromID == nil, records.count < pageSize { return (records, records.count) }
        countBinds.append(Int64(Self.maxSearchCount))
        let counted = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM (SELECT 1 \(matching) LIMIT $9) AS found", binds: countBinds),
            logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }
}
