import Foundation
import LayerModels
import PostgresNIO

// Rows of the channel tables as the service reads them.

struct ChannelRecord: Sendable {
    var id: UUID
    var name: String
    var metadata: JSONValue
    var createdAt: Date
    var createdBy: String?
    var memberCount: Int
    var lastPosition: Int64

    static let columns = "ch.id, ch.name, ch.metadata::text, ch.created_at, ch.created_by, ch.member_count, ch.last_position"

    init(row: PostgresRow) throws {
        let (id, name, metadata, createdAt, createdBy, memberCount, lastPosition) = try row.decode(
            (UUID, String, String, Date, String?, Int32, Int64).self)
        self.id = id
        self.name = name
        self.metadata = JSONValue(jsonText: metadata) ?? [:]
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.memberCount = Int(memberCount)
        self.lastPosition = lastPosition
    }
}

/// One user's membership of a channel.
struct MembershipRecord: Sendable {
    var channelID: UUID
    var userID: String
    var role: Role
    var joinedAt: Date

    /// What a member may do: the creator of a channel owns it (deletes it, removes others);
    /// everyone else who joins or is added is a user.
    enum Role: String, Sendable {
        case owner
        case user
    }

    static let columns = "cm.channel_id, cm.user_id, cm.role, cm.joined_at"

    init(channelID: UUID, userID: String, role: Role, joinedAt: Date) {
        self.channelID = channelID
        self.userID = userID
        self.role = role
        self.joinedAt = joinedAt
    }

    init(row: PostgresRow) throws {
        let (channelID, userID, role, joinedAt) = try row.decode((UUID, String, String, Date).self)
        self.init(channelID: channelID, userID: userID, role: Role(rawValue: role) ?? .user, joinedAt: joinedAt)
    }
}

extension MessageRecord {
    /// The columns of a channel message, read as a ``MessageRecord`` whose `conversationID` is
    /// the channel's id.
    static let channelColumns = columns.replacingOccurrences(of: "m.conversation_id", with: "m.channel_id")
}
