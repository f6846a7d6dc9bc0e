import Foundation
import LayerModels

/// One operation of a user's changelog as `/sync` returns it.
struct OperationObject: Encodable, Sendable {
    var seq: Int64
    var type: ChangeType
    var conversationID: UUID?
    var messageID: UUID?
    var message: MessageObject?
    var conversation: ConversationObject?
    var data: [String: JSONValue]
    // A channel operation names its channel instead of a conversation.
    var channelID: UUID?
    var channel: ChannelObject?
    var membership: MembershipObject?
    var channelMessage: ChannelMessageObject?
    /// For an `update_conversation` recorded with what changed: that, for push (not encoded).
    var changes: ConversationPatch?

    enum CodingKeys: String, CodingKey {
        case seq, type, message, conversation, parts, channel, membership
        case conversationID = "conversation_id"
        case messageID = "message_id"
        case channelID = "channel_id"
    }

    private struct DataKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(type.rawValue, forKey: .type)
        try container.encodeIfPresent(conversationID.map { LayerID(.conversations, $0).uri }, forKey: .conversationID)
        try container.encodeIfPresent(messageID.map { LayerID(.messages, $0).uri }, forKey: .messageID)
        if let message {
            try container.encode(message, forKey: .message)
            try container.encode(message.parts, forKey: .parts)
        }
        try container.encodeIfPresent(conversation, forKey: .conversation)
        try container.encodeIfPresent(channelID.map { LayerID(.channels, $0).uri }, forKey: .channelID)
        try container.encodeIfPresent(channel, forKey: .channel)
        try container.encodeIfPresent(membership, forKey: .membership)
        if let channelMessage {
            try container.encode(channelMessage, forKey: .message)
            try container.encode(channelMessage.parts, forKey: .parts)
        }
        var extra = encoder.container(keyedBy: DataKey.self)
        for (key, value) in data.sorted(by: { $0.key < $1.key }) {
            try extra.encode(value, forKey: DataKey(stringValue: key))
        }
    }
}

/// What an `update_conversation` changed, with the identities of those who came in, ready to be
/// written as the Layer-Patch of a change packet.
struct ConversationPatch: Sendable {
    var changes: ConversationChanges
    var added: [BasicIdentityObject]
}
