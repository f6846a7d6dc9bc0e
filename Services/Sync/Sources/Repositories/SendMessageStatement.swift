import Foundation
import LayerModels
import LayerServer
import PostgresNIO

/// The one-statement send of ``MessageRepository/send(app:conversation:sender:id:parts:notification:logger:)``, prepared once per connection: it
/// is the busiest statement of the service, and planning it anew each time cost a good part of
/// PostgreSQL's time per message.
struct SendMessageStatement: PostgresPreparedStatement {
    typealias Row = (Int64, Date, [String], String?, String?, String?)

    static let sql = """
        WITH c AS (
            UPDATE sync.conversations c SET last_position = c.last_position + 1, last_message_at = clock_timestamp()
            WHERE c.app_id = $1 AND c.id = $2 AND c.deleted_at IS NULL
              AND EXISTS (SELECT 1 FROM sync.participants p
                          WHERE p.app_id = $1 AND p.conversation_id = c.id AND p.user_id = $3 AND p.left_position IS NULL)
              AND NOT EXISTS (SELECT 1 FROM sync.participants p
                              WHERE p.app_id = $1 AND p.conversation_id = c.id AND p.hidden AND p.left_position IS NULL)
            RETURNING c.last_position),
        m AS (
            INSERT INTO sync.messages (app_id, id, conversation_id, position, sender_id, parts, notification, off_the_record)
            SELECT $1, $4, $2, c.last_position, $3, $5::text::jsonb, $6::text::jsonb, $7 FROM c
            RETURNING position, sent_at),
        members AS (
            SELECT p.user_id, EXISTS (SELECT 1 FROM sync.blocks b
                WHERE b.app_id = $1 AND b.owner_id = p.user_id AND b.blocked_id = $3) AS blocking
            FROM sync.participants p WHERE p.app_id = $1 AND p.conversation_id = $2 AND p.left_position IS NULL),
        logged AS (
            SELECT sync.append_change($1, ARRAY(SELECT user_id FROM members WHERE NOT blocking ORDER BY user_id),
                'new_message', $2, $4, NULL) AS appended
            FROM m)
        SELECT m.position, m.sent_at, ARRAY(SELECT user_id FROM members), i.display_name, i.avatar_url, i.identity_type
        FROM m CROSS JOIN logged
        LEFT JOIN sync.identities i ON i.app_id = $1 AND i.user_id = $3
        """

    let app: UUID
    let conversation: UUID
    let sender: String
    let id: UUID
    let parts: String
    let notification: String?
    let offTheRecord: Bool

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 7)
        bindings.append(app)
        bindings.append(conversation)
        bindings.append(sender)
        bindings.append(id)
        bindings.append(parts)
        if let notification { bindings.append(notification) } else { bindings.appendNull() }
        bindings.append(offTheRecord)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
