import Crypto
import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Conversations: creation (distinct ones merged by participant set), participants and metadata
/// changes, deletion, and the lists a user sees.
struct ConversationRepository: PostgresRepository {
    let postgres: PostgresClient

    static let maxParticipants = 25

    struct NewConversation: Sendable {
        var id: UUID?
        var participants: [String]
        var distinct: Bool
        var metadata: JSONValue?
        var receiptsEnabled = true
    }

    enum CreateOutcome: Sendable {
        case created(UUID)
        /// A distinct conversation of these participants exists and matched the request.
        case existing(UUID)
        /// It exists with other metadata.
        case conflict(UUID)
        /// The client-chosen id is taken.
        case idInUse(UUID)
    }

    func createConversation(app: UUID, caller: Caller, _ request: NewConversation, logger: Logger) async throws -> CreateOutcome {
        // In the order given, as the first writer listed them; a creator who did not list
        // themselves comes last, where the Web SDKs put them.
        var members: [String] = []
        for user in request.participants + [caller.userID].compactMap(\.self) where !members.contains(user) {
            members.append(user)
        }
        guard !members.isEmpty else {
            throw APIError(.missingProperty, "A conversation needs participants.", property: "participants")
        }
        guard members.count <= Self.maxParticipants else {
            throw APIError.invalid("participants", "A conversation has at most \(Self.maxParticipants) participants.")
        }
        if let metadata = request.metadata, metadata != .null {
            guard case .object = metadata else { throw APIError.invalid("metadata", "metadata is an object.") }
            try validateMetadata(metadata, property: "metadata")
            try checkMetadataSize(metadata, property: "metadata")
        }
        let metadata = request.metadata == .null ? nil : request.metadata
        let distinctKey = request.distinct ? Self.distinctKey(members.sorted()) : nil
        return try await write(logger: logger) { connection in
            if let id = request.id, try await connection.conversationExists(id: id, logger: logger) {
                return .idInUse(id)
            }
            if let creator = caller.userID {
                try await connection.requireNoBlock(between: creator, and: members, app: app, logger: logger)
            }
            let id = request.id ?? UUID()
            let inserted = try await connection.query(
                """
                INSERT INTO sync.conversations (app_id, id, created_by, is_distinct, distinct_key, metadata, receipts_enabled)
                VALUES (\(app), \(id), \(caller.userID), \(request.distinct), \(distinctKey), \((metadata ?? [:]).jsonText)::jsonb,
                        \(request.receiptsEnabled))
                ON CONFLICT (app_id, distinct_key) WHERE distinct_key IS NOT NULL DO NOTHING
                RETURNING id
                """, logger: logger)
            var created = false
            for try await _ in inserted { created = true }
            if !created, let distinctKey {
                return try await existingDistinct(
                    app: app, key: distinctKey, caller: caller, metadata: metadata, connection, logger)
            }
            try await connection.ensureIdentities(app: app, users: members, logger: logger)
            try await connection.query(
                """
                INSERT INTO sync.participants (app_id, conversation_id, user_id)
                SELECT \(app), \(id), u FROM unnest(\(members)::text[]) WITH ORDINALITY AS t (u, n) ORDER BY n
                """, logger: logger)
            try await connection.appendChange(app: app, users: members, .newConversation, conversation: id, logger: logger)
            return .created(id)
        }
    }

    /// The distinct conversation another creator made first: returned as is when the request's
    /// metadata is absent or equal, a conflict otherwise. A creator who had deleted it from their
    /// devices gets it back.
    private func existingDistinct(
        app: UUID, key: String, caller: Caller, metadata: JSONValue?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> CreateOutcome {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: ConversationRecord.columns) FROM sync.conversations c
            WHERE c.app_id = \(app) AND c.distinct_key = \(key)
            """, logger: logger)
        var found: ConversationRecord?
        for try await row in rows { found = try ConversationRecord(row: row) }
        guard let existing = found else { throw APIError(.serviceUnavailable, "The conversation changed meanwhile; try again.") }
        if let metadata, metadata != existing.metadata { return .conflict(existing.id) }
        if let user = caller.userID {
            let unhidden = try await connection.query(
                """
                UPDATE sync.participants SET hidden = false
                WHERE conversation_id = \(existing.id) AND user_id = \(user) AND hidden RETURNING user_id
                """, logger: logger)
            for try await _ in unhidden {
                try await connection.appendChange(
                    app: app, users: [user], .newConversation, conversation: existing.id, logger: logger)
            }
        }
        return .existing(existing.id)
    }

    /// Distinct conversations are keyed by a digest of their sorted participant list.
    static func distinctKey(_ sortedMembers: [String]) -> String {
        let text = (try? JSONEncoder().encode(sortedMembers)) ?? Data()
        return SHA256.hash(data: text).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Access

    /// The conversation and the caller's participation, if the caller may see it. Users who were
    /// never in it (or deleted it from their devices) get 404; with `forWriting`, former
    /// participants get 403.
    func access(
        app: UUID, conversation id: UUID, caller: Caller, forWriting: Bool, lock: Bool = false,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (ConversationRecord, [ParticipantRecord]) {
        guard let conversation = try await connection.conversation(app: app, id: id, lock: lock, logger: logger) else {
            throw APIError.notFound("The conversation")
        }
        let members = try await connection.participants(app: app, of: [id], logger: logger)[id] ?? []
        if let user = caller.userID {
            guard let own = members.first(where: { $0.userID == user }), !own.hidden else {
                throw APIError.notFound("The conversation")
            }
            if forWriting, !own.isCurrent {
                throw APIError(.accessDenied, "You are no longer a participant of this conversation.")
            }
        }
        return (conversation, members)
    }

    // MARK: Changes

    func patchConversation(
        app: UUID, caller: Caller, id: UUID, operations: [LayerPatchOperation], logger: Logger
    ) async throws {
        try await write(logger: logger) { connection in
            let (conversation, members) = try await access(
                app: app, conversation: id, caller: caller, forWriting: true, lock: true, connection, logger)
            let before = members.filter(\.isCurrent).map(\.userID)
            var current = before
            var metadata = conversation.metadata
            var privateMetadata = members.first { $0.userID == caller.userID }?.privateMetadata ?? [:]
            var privateChanged = false
            for operation in operations {
                switch operation.path.first {
                case "participants" where operation.path.count == 1:
                    current = try applyParticipantsOperation(operation, to: current)
                case "metadata":
                    metadata = try applyMetadataOperation(operation, to: metadata, root: "metadata")
                case "private_metadata" where caller.userID != nil:
                    privateMetadata = try applyMetadataOperation(operation, to: privateMetadata, root: "private_metadata")
                    privateChanged = true
                default:
                    throw APIError.invalid(
                        operation.property, "'\(operation.property)' cannot be changed; patch participants or metadata.")
                }
            }
            guard current.count <= Self.maxParticipants else {
                throw APIError.invalid("participants", "A conversation has at most \(Self.maxParticipants) participants.")
            }
            let added = current.filter { !before.contains($0) }
            let removed = before.filter { !current.contains($0) }
            if let user = caller.userID {
                try await connection.requireNoBlock(between: user, and: added, app: app, logger: logger)
            }
            let membershipChanged = !added.isEmpty || !removed.isEmpty
            try checkMetadataSize(metadata, property: "metadata")
            try checkMetadataSize(privateMetadata, property: "private_metadata")
            let metadataChanged = metadata != conversation.metadata
            if membershipChanged || metadataChanged {
                try await connection.query(
                    """
                    UPDATE sync.conversations SET metadata = \(metadata.jsonText)::jsonb,
                        is_distinct = is_distinct AND NOT \(membershipChanged),
                        distinct_key = CASE WHEN \(membershipChanged) THEN NULL ELSE distinct_key END
                    WHERE id = \(id)
                    """, logger: logger)
            }
            if !removed.isEmpty {
                // Those removed keep the conversation as it was before this change.
                try await connection.removeParticipants(removed, from: conversation, logger: logger)
            }
            if !added.isEmpty {
                try await connection.ensureIdentities(app: app, users: added, logger: logger)
                try await connection.query(
                    """
                    INSERT INTO sync.participants (app_id, conversation_id, user_id)
                    SELECT \(app), \(id), u FROM unnest(\(added)::text[]) WITH ORDINALITY AS t (u, n) ORDER BY n
                    ON CONFLICT (conversation_id, user_id) DO UPDATE
                        SET left_position = NULL, left_at = NULL, left_view = NULL, hidden = false,
                            ordinal = excluded.ordinal
                    """, logger: logger)
            }
            if privateChanged, let user = caller.userID {
                try await connection.query(
                    """
                    UPDATE sync.participants SET private_metadata = \(privateMetadata.jsonText)::jsonb
                    WHERE conversation_id = \(id) AND user_id = \(user)
                    """, logger: logger)
            }
            // Each one hears of what changed as they see it: those who stay of the participants and
            // metadata, the writer also of their private metadata, and those removed of everybody
            // leaving their view (they keep the metadata of before). Who deleted the conversation
            // from their devices hears of it again with its next message.
            let distinct: Bool? = conversation.isDistinct && membershipChanged ? false : nil
            let shared = ConversationChanges(
                added: added, removed: removed,
                metadata: ConversationChanges.metadataChanges(from: conversation.metadata, to: metadata), distinct: distinct)
            var own = shared
            own.privateMetadata = ConversationChanges.metadataChanges(
                from: members.first { $0.userID == caller.userID }?.privateMetadata ?? [:], to: privateMetadata)
            let hidden = Set(members.filter(\.hidden).map(\.userID))
            let stayers = current.filter { !added.contains($0) && !hidden.contains($0) && $0 != caller.userID }
            try await connection.appendChange(app: app, users: added, .newConversation, conversation: id, logger: logger)
            try await connection.appendUpdate(of: id, app: app, users: stayers, shared, logger: logger)
            if let user = caller.userID, current.contains(user), !added.contains(user), !hidden.contains(user) {
                try await connection.appendUpdate(of: id, app: app, users: [user], own, logger: logger)
            }
            try await connection.appendUpdate(
                of: id, app: app, users: removed.filter { !hidden.contains($0) },
                ConversationChanges(removed: before, distinct: distinct), logger: logger)
        }
    }

    private func applyParticipantsOperation(_ operation: LayerPatchOperation, to members: [String]) throws -> [String] {
        let property = "participants"
        func named(_ value: JSONValue?, _ id: String?) throws -> String {
            if let id { return try userID(fromText: id, property: property) }
            guard let value else { throw APIError(.missingProperty, "The operation needs a value or an id.", property: property) }
            return try userID(named: value, property: property)
        }
        switch operation.operation {
        case .add:
            let user = try named(operation.value, operation.id)
            return members.contains(user) ? members : members + [user]
        case .remove:
            let user = try named(operation.value, operation.id)
            return members.filter { $0 != user }
        case .set:
            guard case .array(let values) = operation.value ?? .array([]) else {
                throw APIError.invalid(property, "'set' of participants takes an array.")
            }
            var result: [String] = []
            for value in values {
                let user = try named(value, nil)
                if !result.contains(user) { result.append(user) }
            }
            return result
        case .delete:
            throw APIError.invalid(property, "participants take 'add', 'remove' and 'set' operations.")
        }
    }

    enum DeletionMode: String, Sendable {
        case allParticipants = "all_participants"
        case myDevices = "my_devices"
    }

    /// Deletes a conversation for everybody, or from the caller's devices (and, with `leave`,
    /// takes them out of it). Deleting a conversation that is already deleted for everybody is a
    /// success for the app's backend.
    func deleteConversation(
        app: UUID, caller: Caller, id: UUID, mode: DeletionMode, leave: Bool, logger: Logger
    ) async throws {
        try await write(logger: logger) { connection in
            if caller == .app, try await connection.conversationExists(id: id, app: app, deletedOnly: true, logger: logger) {
                return
            }
            let (conversation, members) = try await access(
                app: app, conversation: id, caller: caller, forWriting: mode == .allParticipants || leave, lock: true,
                connection, logger)
            let current = members.filter(\.isCurrent).map(\.userID)
            switch (mode, caller.userID) {
            case (.allParticipants, _), (_, nil):
                try await connection.query(
                    "UPDATE sync.conversations SET deleted_at = now(), distinct_key = NULL WHERE id = \(id)", logger: logger)
                // Gone for everybody: former participants who still hold it lose it too.
                try await connection.appendChange(
                    app: app, users: members.filter { !$0.hidden }.map(\.userID), .deleteConversation, conversation: id,
                    data: ["mode": "all_participants"], logger: logger)
            case (.myDevices, let user?):
                if leave, current.contains(user) {
                    try await connection.removeParticipants([user], from: conversation, logger: logger)
                }
                try await connection.query(
                    """
                    UPDATE sync.participants SET hidden = true, cleared_position = \(conversation.lastPosition)
                    WHERE conversation_id = \(id) AND user_id = \(user)
                    """, logger: logger)
                try await connection.appendChange(
                    app: app, users: [user], .deleteConversation, conversation: id,
                    data: ["mode": "my_devices", "from_position": .number(Double(conversation.lastPosition))], logger: logger)
                if leave, current.contains(user) {
                    try await connection.query(
                        "UPDATE sync.conversations SET is_distinct = false, distinct_key = NULL WHERE id = \(id)", logger: logger)
                    let others = members.filter { $0.isCurrent && !$0.hidden && $0.userID != user }.map(\.userID)
                    let changes = ConversationChanges(removed: [user], distinct: conversation.isDistinct ? false : nil)
                    try await connection.appendUpdate(of: id, app: app, users: others, changes, logger: logger)
                }
            }
        }
    }
}

extension PostgresConnection {
    /// An `update_conversation` for `users`, recording what changed for them; nothing when
    /// nothing did.
    func appendUpdate(
        of conversation: UUID, app: UUID, users: [String], _ changes: ConversationChanges, logger: Logger
    ) async throws {
        guard !changes.isEmpty else { return }
        try await appendChange(
            app: app, users: users, .updateConversation, conversation: conversation,
            data: [ConversationChanges.dataKey: try jsonValue(changes)], logger: logger)
    }

    func conversationExists(id: UUID, app: UUID? = nil, deletedOnly: Bool = false, logger: Logger) async throws -> Bool {
        let rows = try await query(
            """
            SELECT 1 FROM sync.conversations
            WHERE id = \(id) AND (\(app)::uuid IS NULL OR app_id = \(app)) AND (NOT \(deletedOnly) OR deleted_at IS NOT NULL)
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Takes `users` out of a conversation: they keep the messages up to its last position, and
    /// from now on see it as `conversation` is (its metadata, and the other participants, current
    /// and former, with their marks of now), nothing of what comes after.
    func removeParticipants(_ users: [String], from conversation: ConversationRecord, logger: Logger) async throws {
        // One statement: every user removed sees the others as they were before any of them left.
        try await query(
            """
            UPDATE sync.participants p SET left_position = \(conversation.lastPosition), left_at = now(),
                left_view = jsonb_build_object(
                    'metadata', \(conversation.metadata.jsonText)::jsonb,
                    'members', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                            'user_id', o.user_id, 'read', o.read_position, 'delivered', o.delivered_position,
                            'left', o.left_position) ORDER BY o.user_id), '[]')
                        FROM sync.participants o WHERE o.conversation_id = p.conversation_id AND o.user_id <> p.user_id))
            WHERE p.conversation_id = \(conversation.id) AND p.user_id = ANY(\(users)) AND p.left_position IS NULL
            """, logger: logger)
    }

    /// Fails with 422 `participant_blocked` (naming `participants`) when `user` would put in a
    /// conversation someone they blocked or someone who blocked them. The app's backend is not
    /// held to blocks: it decides who talks to whom.
    func requireNoBlock(between user: String, and users: [String], app: UUID, logger: Logger) async throws {
        if let blocked = try await blockedBy(user, among: users, app: app, logger: logger).first {
            throw APIError(.participantBlocked, "You blocked '\(blocked)', so they cannot be added.", property: "participants")
        }
        if let blocker = try await usersBlocking(user, among: users, app: app, logger: logger).sorted().first {
            throw APIError(
                .participantBlocked, "'\(blocker)' cannot be added to a conversation with you.", property: "participants")
        }
    }

    /// Those of `users` whom `owner` blocked.
    func blockedBy(_ owner: String, among users: [String], app: UUID, logger: Logger) async throws -> [String] {
        guard !users.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT blocked_id FROM sync.blocks
            WHERE app_id = \(app) AND owner_id = \(owner) AND blocked_id = ANY(\(users)) ORDER BY blocked_id
            """, logger: logger)
        var result: [String] = []
        for try await user in rows.decode(String.self) { result.append(user) }
        return result
    }
}
