import Foundation
import LayerModels
import LayerServer
import Logging

extension Presenter {
    func channelReference(_ record: ChannelRecord, named: Bool = false) -> ChannelReference {
        ChannelReference(
            id: LayerID(.channels, record.id).uri, url: urls.channel(record.id), name: named ? record.name : nil)
    }

    /// Channels as the viewer sees them: each with the viewer's membership, if any.
    mutating func channels(_ records: [ChannelRecord]) async throws -> [ChannelObject] {
        guard !records.isEmpty else { return [] }
        var own: [UUID: MembershipRecord] = [:]
        if let viewer {
            for membership in try await database.memberships(of: records.map(\.id), users: [viewer], logger: logger) {
                own[membership.channelID] = membership
            }
            try await loadIdentities([viewer])
        }
        return records.map { channel($0, membership: own[$0.id]) }
    }

    /// A channel with the given membership of the viewer's; needs the viewer's identity loaded.
    func channel(_ record: ChannelRecord, membership: MembershipRecord?) -> ChannelObject {
        ChannelObject(
            id: LayerID(.channels, record.id).uri, url: urls.channel(record.id),
            messagesURL: urls.channel(record.id) + "/messages", membersURL: urls.channel(record.id) + "/members",
            createdAt: record.createdAt, name: record.name, metadata: record.metadata,
            membership: membership.map { self.membership($0, of: record) })
    }

    /// Memberships of one channel, with their identities.
    mutating func memberships(_ records: [MembershipRecord], of channel: ChannelRecord) async throws -> [MembershipObject] {
        try await loadIdentities(records.map(\.userID))
        return records.map { membership($0, of: channel) }
    }

    /// A membership; needs its user's identity loaded.
    func membership(_ record: MembershipRecord, of channel: ChannelRecord) -> MembershipObject {
        MembershipObject(
            id: LayerID.membership(of: record.userID, in: channel.id), url: urls.membership(of: record.userID, in: channel.id),
            channel: channelReference(channel, named: true), identity: basicIdentity(record.userID),
            role: record.role.rawValue, joinedAt: record.joinedAt)
    }

    /// Channel messages (read as ``MessageRecord``s whose `conversationID` is their channel's).
    /// They look the same to every member.
    mutating func channelMessages(_ records: [MessageRecord]) async throws -> [ChannelMessageObject] {
        try await loadIdentities(records.compactMap(\.senderID))
        return records.map(channelMessage)
    }

    /// A channel message; needs its sender's identity loaded (or at hand, as after a send).
    func channelMessage(_ record: MessageRecord) -> ChannelMessageObject {
        let url = urls.channelMessage(record.id, in: record.conversationID)
        let sender: SenderObject =
            if let senderID = record.senderID { .identity(basicIdentity(senderID)) } else {
                .system(name: record.senderName ?? "")
            }
        return ChannelMessageObject(
            id: LayerID(.messages, record.id).uri, url: url, position: record.position,
            channel: ChannelReference(
                id: LayerID(.channels, record.conversationID).uri, url: urls.channel(record.conversationID)),
            parts: record.parts.enumerated().map { index, part in
                PartObject(
                    messageID: LayerID(.messages, record.id).uri, messageURL: url, uuid: part.id, index: index,
                    mimeType: part.mimeType, body: part.body, encoding: part.encoding,
                    content: content(of: part, conversation: nil), updatedAt: record.updatedAt)
            },
            sentAt: record.sentAt, updatedAt: record.updatedAt, sender: sender, notification: record.notification,
            offTheRecord: record.offTheRecord)
    }
}
