import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// A user's badge: the external unread count the app's backend sets, beside the unread counts of
/// the user's conversations, counted as each conversation's `unread_message_count` is.
struct BadgeRepository: PostgresRepository {
    let postgres: PostgresClient

    struct Badge: Sendable, Encodable, Equatable {
        var externalUnreadCount: Int
        /// Conversations in the user's list with at least one unread message.
        var unreadConversationCount: Int
        /// Unread messages in all of them.
        var unreadMessageCount: Int

        enum CodingKeys: String, CodingKey {
            case externalUnreadCount = "external_unread_count"
            case unreadConversationCount = "unread_conversation_count"
            case unreadMessageCount = "unread_message_count"
        }
    }

    func setExternalCount(app: UUID, user: String, count: Int, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.badges (app_id, user_id, external_unread_count) VALUES (\(app), \(user), \(Int32(count)))
            ON CONFLICT (app_id, user_id) DO UPDATE SET external_unread_count = excluded.external_unread_count, updated_at = now()
            """, logger: logger)
    }

    func badge(app: UUID, user: String, logger: Logger) async throws -> Badge {
        // The conversations of the user's list (GET …/users/<user>/conversations).
        let rows = try await postgres.query(
            """
            SELECT (SELECT external_unread_count FROM sync.badges WHERE app_id = \(app) AND user_id = \(user)),
                count(*) FILTER (WHERE unread > 0), coalesce(sum(unread), 0)::bigint
            FROM (SELECT p.unread_count AS unread
                FROM sync.participants p JOIN sync.conversations c ON c.id = p.conversation_id
                WHERE p.app_id = \(app) AND p.user_id = \(user) AND NOT p.hidden AND c.deleted_at IS NULL) AS counts
            """, logger: logger)
        for try await (external, conversations, messages) in rows.decode((Int32?, Int64, Int64).self) {
            return Badge(
                externalUnreadCount: Int(external ?? 0), unreadConversationCount: Int(conversations),
                unreadMessageCount: Int(messages))
        }
        return Badge(externalUnreadCount: 0, unreadConversationCount: 0, unreadMessageCount: 0)
    }
}

extension SyncRepositories {
    var badges: BadgeRepository { BadgeRepository(postgres: postgres) }
}
