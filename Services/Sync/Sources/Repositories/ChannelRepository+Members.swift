import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Who is in a channel: joining and leaving, adding and removing others, and the member list.
extension ChannelRepository {
    /// Puts `user` in a channel. Any user of the app may join (add themselves); a member may add
    /// someone else, as long as neither blocked the other. The channel's row stays locked until
    /// commit, so of concurrent joins for its last seat exactly one wins. Joining a channel one
    /// is in changes nothing.
    func addMember(app: UUID, caller: Caller, channel id: UUID, user: String, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            let joining = caller.userID == user
            let (channel, _) = try await access(
                app: app, channel: id, caller: caller, membersOnly: !joining, lock: true, connection, logger)
            if !joining, let adder = caller.userID {
                try await connection.requireNoBlock(between: adder, and: [user], app: app, property: "user", logger: logger)
            }
            let members = try await connection.memberIDs(of: id, logger: logger)
            guard !members.contains(user) else { return }
            guard channel.memberCount < Self.maxMembers else {
                throw APIError.invalid("members", "The channel is full: a channel has at most \(Self.maxMembers) members.")
            }
            try await connection.ensureIdentities(app: app, users: [user], logger: logger)
            try await connection.query(
                "INSERT INTO sync.channel_members (app_id, channel_id, user_id, role) VALUES (\(app), \(id), \(user), 'user')",
                logger: logger)
            try await connection.query(
                "UPDATE sync.channels SET member_count = member_count + 1 WHERE id = \(id)", logger: logger)
            try await connection.appendChange(app: app, users: [user], .newChannel, conversation: id, logger: logger)
            try await connection.appendChange(
                app: app, users: members, .newChannelMember, conversation: id, data: ["user_id": .string(user)],
                logger: logger)
        }
    }

    /// Takes `user` out of a channel: themselves (leaving), or someone else by the channel's
    /// owner or the app's backend. Their devices drop the channel; the other members hear of it.
    func removeMember(app: UUID, caller: Caller, channel id: UUID, user: String, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            let leaving = caller.userID == user
            let (_, own) = try await access(
                app: app, channel: id, caller: caller, membersOnly: !leaving, lock: true, connection, logger)
            if !leaving, caller != .app, own?.role != .owner {
                throw APIError(.accessDenied, "Only the channel's owner can remove others from it.")
            }
            let removed = try await connection.query(
                "DELETE FROM sync.channel_members WHERE channel_id = \(id) AND user_id = \(user) RETURNING user_id",
                logger: logger)
            var found = false
            for try await _ in removed { found = true }
            guard found else { throw APIError.notFound("The membership of '\(user)'") }
            try await connection.query(
                "UPDATE sync.channels SET member_count = member_count - 1 WHERE id = \(id)", logger: logger)
            try await connection.appendChange(
                app: app, users: [user], .deleteChannel, conversation: id, data: ["mode": "my_devices"], logger: logger)
            try await connection.appendChange(
                app: app, users: try await connection.memberIDs(of: id, logger: logger), .deleteChannelMember,
                conversation: id, data: ["user_id": .string(user)], logger: logger)
        }
    }

    /// A page of a channel's members in the order they joined, after `fromUser`; and how many
    /// there are.
    func members(
        channel id: UUID, fromUser: String?, pageSize: Int, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (records: [MembershipRecord], total: Int) {
        if let fromUser, try await connection.memberships(of: [id], users: [fromUser], logger: logger).isEmpty {
            throw APIError.invalid("from_id", "from_id names no member of this channel.")
        }
        let rows = try await connection.query(
            """
            SELECT \(unescaped: MembershipRecord.columns) FROM sync.channel_members cm
            WHERE cm.channel_id = \(id)
              AND (\(fromUser)::text IS NULL OR (cm.joined_at, cm.user_id) > (
                  SELECT f.joined_at, f.user_id FROM sync.channel_members f WHERE f.channel_id = \(id) AND f.user_id = \(fromUser)))
            ORDER BY cm.joined_at, cm.user_id LIMIT \(Int64(pageSize))
            """, logger: logger)
        var records: [MembershipRecord] = []
        for try await row in rows { records.append(try MembershipRecord(row: row)) }
        let counted = try await connection.query(
            "SELECT count(*) FROM sync.channel_members WHERE channel_id = \(id)", logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }
}

extension PostgresConnection {
    /// Fails with 422 `participant_blocked` (naming `property`) when `user` would put in a channel
    /// someone they blocked or someone who blocked them. Joining is not held to blocks: a channel
    /// is open to every user of the app.
    func requireNoBlock(between user: String, and users: [String], app: UUID, property: String, logger: Logger) async throws {
        if let blocked = try await blockedBy(user, among: users, app: app, logger: logger).first {
            throw APIError(.participantBlocked, "You blocked '\(blocked)', so they cannot be added.", property: property)
        }
        if let blocker = try await usersBlocking(user, among: users, app: app, logger: logger).sorted().first {
            throw APIError(.participantBlocked, "'\(blocker)' cannot be added to a channel by you.", property: property)
        }
    }
}
