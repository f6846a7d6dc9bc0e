import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Channels: creation (one channel per name in an app), access, metadata changes, deletion and
/// the lists of channels. Members and messages are in the extensions beside this file.
struct ChannelRepository: PostgresRepository {
    let postgres: PostgresClient

    static let maxMembers = 250

    struct NewChannel: Sendable {
        var id: UUID?
        var name: String
        var members: [String]
        var metadata: JSONValue?
    }

    enum CreateOutcome: Sendable {
        case created(UUID)
        /// Another channel of the app has the name.
        case conflict(UUID)
        /// The client-chosen id is taken.
        case idInUse(UUID)
    }

    /// Creates a channel with its first members; a user who creates one is among them and owns it.
    func createChannel(app: UUID, caller: Caller, _ request: NewChannel, logger: Logger) async throws -> CreateOutcome {
        var members = request.members
        if let creator = caller.userID { members.append(creator) }
        members = Array(Set(members)).sorted()
        try Self.checkMemberCount(members.count)
        if let metadata = request.metadata, metadata != .null {
            guard case .object = metadata else { throw APIError.invalid("metadata", "metadata is an object.") }
            try validateMetadata(metadata, property: "metadata")
            try checkMetadataSize(metadata, property: "metadata")
        }
        let metadata = request.metadata == .null ? nil : request.metadata
        let id = request.id ?? UUID()
        do {
            return try await write(logger: logger) { connection in
                if request.id != nil, try await connection.channelExists(id: id, logger: logger) { return .idInUse(id) }
                if let creator = caller.userID {
                    try await connection.requireNoBlock(
                        between: creator, and: members, app: app, property: "members", logger: logger)
                }
                let inserted = try await connection.query(
                    """
                    INSERT INTO sync.channels (app_id, id, name, metadata, created_by, member_count)
                    VALUES (\(app), \(id), \(request.name), \((metadata ?? [:]).jsonText)::jsonb, \(caller.userID),
                            \(Int32(members.count)))
                    ON CONFLICT (app_id, name) WHERE deleted_at IS NULL DO NOTHING
                    RETURNING id
                    """, logger: logger)
                var created = false
                for try await _ in inserted { created = true }
                guard created else {
                    // The other creator's row is committed by now: the insert waited for it.
                    guard let existing = try await connection.channelID(app: app, name: request.name, logger: logger) else {
                        throw APIError(.serviceUnavailable, "The channel changed meanwhile; try again.")
                    }
                    return .conflict(existing)
                }
                try await connection.ensureIdentities(app: app, users: members, logger: logger)
                try await connection.query(
                    """
                    INSERT INTO sync.channel_members (app_id, channel_id, user_id, role)
                    SELECT \(app), \(id), u, CASE WHEN u = \(caller.userID) THEN 'owner' ELSE 'user' END
                    FROM unnest(\(members)::text[]) AS u
                    """, logger: logger)
                try await connection.appendChange(app: app, users: members, .newChannel, conversation: id, logger: logger)
                return .created(id)
            }
        } catch let error as PSQLError where error.sqlState == "23505" {
            // A concurrent create took the same client-chosen id first.
            return .idInUse(id)
        }
    }

    static func checkMemberCount(_ count: Int) throws {
        guard count <= maxMembers else {
            throw APIError.invalid("members", "A channel has at most \(maxMembers) members.")
        }
    }

    // MARK: Access

    /// The channel and the caller's membership. A channel of another app, a deleted one or none
    /// is 404; with `membersOnly`, a user who is not a member gets 403 (anyone in the app may
    /// see that a channel exists, and join it, but only members read and write in it).
    func access(
        app: UUID, channel id: UUID, caller: Caller, membersOnly: Bool, lock: Bool = false,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (ChannelRecord, MembershipRecord?) {
        guard let channel = try await connection.channel(app: app, id: id, lock: lock, logger: logger) else {
            throw APIError.notFound("The channel")
        }
        guard let user = caller.userID else { return (channel, nil) }
        let membership = try await connection.memberships(of: [id], users: [user], logger: logger).first
        if membersOnly, membership == nil {
            throw APIError(.accessDenied, "Only members of the channel may do this; join it first.")
        }
        return (channel, membership)
    }

    // MARK: Changes

    /// Changes a channel's metadata (`set` and `delete` of `metadata…`); its name never changes.
    /// Members are told of exactly the operations that changed it.
    func patchChannel(app: UUID, caller: Caller, id: UUID, operations: [LayerPatchOperation], logger: Logger) async throws {
        try await write(logger: logger) { connection in
            let (channel, _) = try await access(
                app: app, channel: id, caller: caller, membersOnly: true, lock: true, connection, logger)
            var metadata = channel.metadata
            var applied: [JSONValue] = []
            for operation in operations {
                guard operation.path.first == "metadata" else {
                    throw APIError.invalid(
                        operation.property, "'\(operation.property)' cannot be changed; a channel's metadata can.")
                }
                metadata = try applyMetadataOperation(operation, to: metadata, root: "metadata")
                var change: [String: JSONValue] = [
                    "operation": .string(operation.operation.rawValue), "property": .string(operation.property),
                ]
                if operation.operation == .set { change["value"] = operation.value ?? .null }
                applied.append(.object(change))
            }
            try checkMetadataSize(metadata, property: "metadata")
            guard metadata != channel.metadata else { return }
            try await connection.query(
                "UPDATE sync.channels SET metadata = \(metadata.jsonText)::jsonb WHERE id = \(id)", logger: logger)
            try await connection.appendChange(
                app: app, users: try await connection.memberIDs(of: id, logger: logger), .updateChannel, conversation: id,
                data: ["patch": .array(applied)], logger: logger)
        }
    }

    /// Deletes a channel for everybody: its owner, or the app's backend, may.
    func deleteChannel(app: UUID, caller: Caller, id: UUID, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            let (_, membership) = try await access(
                app: app, channel: id, caller: caller, membersOnly: false, lock: true, connection, logger)
            if caller != .app, membership?.role != .owner {
                throw APIError(.accessDenied, "Only the channel's owner can delete it.")
            }
            try await connection.query("UPDATE sync.channels SET deleted_at = now() WHERE id = \(id)", logger: logger)
            try await connection.appendChange(
                app: app, users: try await connection.memberIDs(of: id, logger: logger), .deleteChannel, conversation: id,
                data: ["mode": "all_participants"], logger: logger)
        }
    }

    // MARK: Lists

    /// A page of channels, newest first, after `fromID`: those `member` belongs to, or with no
    /// member every channel of the app; and how many there are.
    func channels(
        app: UUID, member: String?, fromID: UUID?, pageSize: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (records: [ChannelRecord], total: Int) {
        if let fromID, try await connection.channel(app: app, id: fromID, logger: logger) == nil {
            throw APIError.invalid("from_id", "from_id names no channel of this app.")
        }
        // A member's list starts from their memberships; the app's from its channels.
        let source =
            member == nil
            ? "sync.channels ch WHERE ch.app_id = $1 AND $2::text = ''"
            : """
            sync.channel_members cm JOIN sync.channels ch ON ch.id = cm.channel_id
            WHERE cm.app_id = $1 AND cm.user_id = $2
            """
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(member ?? "")
        binds.append(fromID)
        binds.append(Int64(pageSize))
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT \(ChannelRecord.columns) FROM \(source) AND ch.deleted_at IS NULL
                      AND ($3::uuid IS NULL OR (ch.created_at, ch.id) < (SELECT f.created_at, f.id FROM sync.channels f WHERE f.id = $3))
                    ORDER BY ch.created_at DESC, ch.id DESC LIMIT $4
                    """, binds: binds), logger: logger)
        var records: [ChannelRecord] = []
        for try await row in rows { records.append(try ChannelRecord(row: row)) }
        var countBinds = PostgresBindings()
        countBinds.append(app)
        countBinds.append(member ?? "")
        let counted = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT count(*) FROM \(source) AND ch.deleted_at IS NULL", binds: countBinds),
            logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }
}

extension PostgresConnection {
    /// A channel of `app` that is not deleted.
    func channel(app: UUID, id: UUID, lock: Bool = false, logger: Logger) async throws -> ChannelRecord? {
        let rows = try await query(
            """
            SELECT \(unescaped: ChannelRecord.columns) FROM sync.channels ch
            WHERE ch.app_id = \(app) AND ch.id = \(id) AND ch.deleted_at IS NULL \(unescaped: lock ? "FOR UPDATE" : "")
            """, logger: logger)
        for try await row in rows { return try ChannelRecord(row: row) }
        return nil
    }

    /// Channels by id, deleted ones included (the changelog still names them).
    func channelsIncludingDeleted(app: UUID, ids: [UUID], logger: Logger) async throws -> [ChannelRecord] {
        guard !ids.isEmpty else { return [] }
        let rows = try await query(
            "SELECT \(unescaped: ChannelRecord.columns) FROM sync.channels ch WHERE ch.app_id = \(app) AND ch.id = ANY(\(ids))",
            logger: logger)
        var result: [ChannelRecord] = []
        for try await row in rows { result.append(try ChannelRecord(row: row)) }
        return result
    }

    /// Whether any app has a channel with this id, deleted or not.
    func channelExists(id: UUID, logger: Logger) async throws -> Bool {
        let rows = try await query("SELECT 1 FROM sync.channels WHERE id = \(id)", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// The channel of `app` that has `name` now.
    func channelID(app: UUID, name: String, logger: Logger) async throws -> UUID? {
        let rows = try await query(
            "SELECT id FROM sync.channels WHERE app_id = \(app) AND name = \(name) AND deleted_at IS NULL", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    /// The memberships of `users` in `channels`.
    func memberships(of channels: [UUID], users: [String], logger: Logger) async throws -> [MembershipRecord] {
        guard !channels.isEmpty, !users.isEmpty else { return [] }
        let rows = try await query(
            """
            SELECT \(unescaped: MembershipRecord.columns) FROM sync.channel_members cm
            WHERE cm.channel_id = ANY(\(channels)) AND cm.user_id = ANY(\(users))
            """, logger: logger)
        var result: [MembershipRecord] = []
        for try await row in rows { result.append(try MembershipRecord(row: row)) }
        return result
    }

    /// Every member of a channel, in user order.
    func memberIDs(of channel: UUID, logger: Logger) async throws -> [String] {
        let rows = try await query(
            "SELECT user_id FROM sync.channel_members WHERE channel_id = \(channel) ORDER BY user_id", logger: logger)
        var users: [String] = []
        for try await user in rows.decode(String.self) { users.append(user) }
        return users
    }
}
