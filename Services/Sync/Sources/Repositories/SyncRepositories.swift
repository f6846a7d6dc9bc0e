import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The sync service's data: every read and write of the `sync` schema goes through one of these
/// repositories. Each write is one transaction that also appends its changes to the changelogs of
/// exactly the users who may see them.
struct SyncRepositories: PostgresRepository {
    let postgres: PostgresClient

    var conversations: ConversationRepository { ConversationRepository(postgres: postgres) }
    var messages: MessageRepository { MessageRepository(postgres: postgres) }
    var changelog: ChangelogRepository { ChangelogRepository(postgres: postgres) }
    var content: ContentRepository { ContentRepository(postgres: postgres) }
    var identities: IdentityRepository { IdentityRepository(postgres: postgres) }
    var announcements: AnnouncementRepository { AnnouncementRepository(postgres: postgres) }
    var blocks: BlockRepository { BlockRepository(postgres: postgres) }
    var follows: FollowRepository { FollowRepository(postgres: postgres) }
    var devices: DeviceRepository { DeviceRepository(postgres: postgres) }
    var requestTags: RequestTagRepository { RequestTagRepository(postgres: postgres) }
    var scheduled: ScheduledMessageRepository { ScheduledMessageRepository(postgres: postgres) }
    var channels: ChannelRepository { ChannelRepository(postgres: postgres) }
    var webhooks: WebhookRepository { WebhookRepository(postgres: postgres) }
}

/// The operations of the changelog.
enum ChangeType: String, Sendable, CaseIterable {
    case newMessage = "new_message"
    case updateStatus = "update_status"
    case updateTags = "update_tags"
    case newConversation = "new_conversation"
    case updateConversation = "update_conversation"
    case deleteConversation = "delete_conversation"
    case deleteMessage = "delete_message"
    // Channels (their rows hold the channel's id as `conversation_id`).
    case newChannel = "new_channel"
    case updateChannel = "update_channel"
    case deleteChannel = "delete_channel"
    case newChannelMember = "new_channel_member"
    case deleteChannelMember = "delete_channel_member"
    case newChannelMessage = "new_channel_message"
    case deleteChannelMessage = "delete_channel_message"
}

extension PostgresConnection {
    /// Appends one change to the changelogs of `users`, inside the caller's transaction.
    func appendChange(
        app: UUID, users: [String], _ type: ChangeType, conversation: UUID?, message: UUID? = nil,
        data: JSONValue? = nil, logger: Logger
    ) async throws {
        guard !users.isEmpty else { return }
        let dataText = data?.jsonText
        try await query(
            """
            SELECT sync.append_change(\(app), \(users), \(type.rawValue), \(conversation), \(message), \(dataText)::jsonb)
            """, logger: logger)
    }

    func conversation(app: UUID, id: UUID, lock: Bool = false, logger: Logger) async throws -> ConversationRecord? {
        let rows = try await query(
            """
            SELECT \(unescaped: ConversationRecord.columns) FROM sync.conversations c
            WHERE c.app_id = \(app) AND c.id = \(id) AND c.deleted_at IS NULL \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger)
        for try await row in rows { return try ConversationRecord(row: row) }
        return nil
    }

    func participants(app: UUID, of conversations: [UUID], logger: Logger) async throws -> [UUID: [ParticipantRecord]] {
        guard !conversations.isEmpty else { return [:] }
        let rows = try await query(
            """
            SELECT \(unescaped: ParticipantRecord.columns) FROM sync.participants p
            WHERE p.app_id = \(app) AND p.conversation_id = ANY(\(conversations)) ORDER BY p.ordinal, p.user_id
            """, logger: logger)
        var result: [UUID: [ParticipantRecord]] = [:]
        for try await row in rows {
            let participant = try ParticipantRecord(row: row)
            result[participant.conversationID, default: []].append(participant)
        }
        return result
    }

    func messagesIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [MessageRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await query(
            "SELECT \(unescaped: MessageRecord.columns) FROM sync.messages m WHERE m.app_id = \(app) AND m.id = ANY(\(ids))",
            logger: logger)
        var result: [MessageRecord] = []
        for try await row in rows { result.append(try MessageRecord(row: row)) }
        return result
    }

    func message(app: UUID, id: UUID, logger: Logger) async throws -> MessageRecord? {
        let rows = try await query(
            """
            SELECT \(unescaped: MessageRecord.columns) FROM sync.messages m
            JOIN sync.conversations c ON c.id = m.conversation_id
            WHERE m.app_id = \(app) AND m.id = \(id) AND m.deleted_at IS NULL AND c.deleted_at IS NULL
            """, logger: logger)
        for try await row in rows { return try MessageRecord(row: row) }
        return nil
    }

    /// The app's messages of `ids` that are neither deleted nor in a deleted conversation.
    func messages(app: UUID, ids: [UUID], logger: Logger) async throws -> [MessageRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT \(unescaped: MessageRecord.columns) FROM sync.messages m
            JOIN sync.conversations c ON c.id = m.conversation_id
            WHERE m.app_id = \(app) AND m.id = ANY(\(ids)) AND m.deleted_at IS NULL AND c.deleted_at IS NULL
            """, logger: logger)
        var result: [MessageRecord] = []
        for try await row in rows { result.append(try MessageRecord(row: row)) }
        return result
    }

    /// Makes sure every user has an identity row (participants named before they ever signed in).
    /// An empty row counts as never changed, so that the claims of any sign-in fill it in, even of
    /// one that opened its session before the row was made and is reported only later.
    func ensureIdentities(app: UUID, users: [String], logger: Logger) async throws {
        guard !users.isEmpty else { return }
        try await query(
            """
            INSERT INTO sync.identities (app_id, user_id, updated_at)
            SELECT \(app), u, '-infinity' FROM unnest(\(users)::text[]) AS u ORDER BY u
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Those of `users` who blocked `sender`.
    func usersBlocking(_ sender: String, among users: [String], app: UUID, logger: Logger) async throws -> Set<String> {
        let rows = try await query(
            """
            SELECT owner_id FROM sync.blocks
            WHERE app_id = \(app) AND blocked_id = \(sender) AND owner_id = ANY(\(users))
            """, logger: logger)
        var result = Set<String>()
        for try await owner in rows.decode(String.self) { result.insert(owner) }
        return result
    }
}

/// The part of a SQL condition that decides whether participant `p` sees message `m`: within the
/// part of the history they may see, not deleted for everybody or from their devices, and not
/// from someone they blocked. (`sync.count_messages` of ``m0008ParticipantCounts`` counts by the
/// same rule: a change here is a change there.)
let messageVisibleToParticipant = """
    m.deleted_at IS NULL AND m.position > p.cleared_position
    AND (p.left_position IS NULL OR m.position <= p.left_position)
    AND NOT EXISTS (SELECT 1 FROM sync.message_tags t
        WHERE t.message_id = m.id AND t.user_id = p.user_id AND 'deleted' = ANY(t.tags))
    AND NOT EXISTS (SELECT 1 FROM sync.blocks b
        WHERE b.app_id = p.app_id AND b.owner_id = p.user_id AND b.blocked_id = m.sender_id)
    """
