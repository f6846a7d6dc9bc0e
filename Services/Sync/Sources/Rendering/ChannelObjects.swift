import Foundation
import LayerModels
import LayerServer

// The objects of channels, in the shapes the Web SDK 3.4 and the Web XDK read: a channel with
// the viewer's `membership`, memberships that name their channel and identity, and channel
// messages that name their `channel` where a conversation message names its conversation, with
// no receipts or read state.

extension URLBuilder {
    /// `/apps/<app>` in the Server API, nothing in the Client API.
    private var channelRoot: String { serverAPIApp.map { "\(base)/apps/\($0.lowercased)" } ?? base }

    func channel(_ id: UUID) -> String { "\(channelRoot)/channels/\(id.lowercased)" }

    /// A membership: `/channels/<id>/members/<percent-encoded user id>`.
    func membership(of user: String, in channel: UUID) -> String { "\(self.channel(channel))/members/\(Self.encoded(user))" }

    /// A channel message: `/messages/<id>`, or in the Server API its path in its channel.
    func channelMessage(_ id: UUID, in channel: UUID) -> String {
        serverAPIApp == nil ? "\(base)/messages/\(id.lowercased)" : "\(self.channel(channel))/messages/\(id.lowercased)"
    }
}

extension LayerID {
    /// `layer:///channels/<channel>/members/<percent-encoded user id>`.
    static func membership(of user: String, in channel: UUID) -> String {
        "\(LayerID(.channels, channel).uri)/members/\(URLBuilder.encoded(user))"
    }
}

struct ChannelReference: Encodable, Sendable {
    var id: String
    var url: String
    /// Set in a membership, which names its channel.
    var name: String?
}

struct MembershipObject: Encodable, Sendable {
    var id: String
    var url: String
    var channel: ChannelReference
    var identity: BasicIdentityObject
    var role: String
    var joinedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, url, channel, identity, role
        case joinedAt = "joined_at"
    }
}

struct ChannelObject: Encodable, Sendable {
    var id: String
    var url: String
    var messagesURL: String
    var membersURL: String
    var createdAt: Date
    var name: String
    var metadata: JSONValue
    /// The viewer's membership; null for who is not a member, and in the Server API's system view.
    @Nullable var membership: MembershipObject?

    enum CodingKeys: String, CodingKey {
        case id, url, name, metadata, membership
        case messagesURL = "messages_url"
        case membersURL = "members_url"
        case createdAt = "created_at"
    }
}

struct ChannelMessageObject: Encodable, Sendable {
    var id: String
    var url: String
    var position: Int64
    var channel: ChannelReference
    var parts: [PartObject]
    var sentAt: Date
    @Nullable var updatedAt: Date?
    var sender: SenderObject
    @Nullable var notification: JSONValue?
    var offTheRecord: Bool

    enum CodingKeys: String, CodingKey {
        case id, url, position, channel, parts, sender, notification
        case offTheRecord = "off_the_record"
        case sentAt = "sent_at"
        case updatedAt = "updated_at"
    }
}
