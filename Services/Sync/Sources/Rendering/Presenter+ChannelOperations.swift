import Foundation
import LayerModels
import LayerServer
import Logging

extension ChangeType {
    /// Whether the operation is about a channel (its entry's `conversation` is the channel's id).
    var isChannel: Bool {
        switch self {
        case .newChannel, .updateChannel, .deleteChannel, .newChannelMember, .deleteChannelMember, .newChannelMessage,
            .deleteChannelMessage:
            true
        case .newMessage, .updateStatus, .updateTags, .newConversation, .updateConversation, .deleteConversation,
            .deleteMessage:
            false
        }
    }
}

/// One row of one user's changelog.
struct ChangeKey: Hashable, Sendable {
    let user: String
    let seq: Int64
}

extension Presenter {
    /// The channel operations among `entries`, each as its own user sees it: a channel with that
    /// user's membership, the membership a member op is about, a channel message (the same for
    /// every member).
    func channelOperations(_ entries: [ChangeEntry]) async throws -> [ChangeKey: OperationObject] {
        let entries = entries.filter(\.type.isChannel)
        guard !entries.isEmpty else { return [:] }
        var system = viewing(as: nil)
        let channelIDs = Set(entries.compactMap(\.conversation))
        let channels = Dictionary(
            try await system.database.channelsIncludingDeleted(app: app, ids: Array(channelIDs), logger: logger).map {
                ($0.id, $0)
            },
            uniquingKeysWith: { first, _ in first })
        // Whose membership of which channel each operation shows: the viewer's own in a channel,
        // the user a member operation is about.
        var users = Set(entries.map(\.user))
        users.formUnion(entries.compactMap { $0.data["user_id"]?.stringValue })
        let found = try await system.database.memberships(of: Array(channelIDs), users: Array(users), logger: logger)
        let byPair = Dictionary(found.map { ("\($0.channelID)|\($0.userID)", $0) }, uniquingKeysWith: { first, _ in first })
        try await system.loadIdentities(users)
        let messageIDs = entries.filter { $0.type == .newChannelMessage }.compactMap(\.message)
        let messageRecords = try await system.database.channelMessages(ids: messageIDs, logger: logger)
        var messages: [UUID: ChannelMessageObject] = [:]
        for (record, object) in zip(messageRecords, try await system.channelMessages(messageRecords)) {
            messages[record.id] = object
        }
        var result: [ChangeKey: OperationObject] = [:]
        for entry in entries {
            guard let id = entry.conversation else { continue }
            var operation = OperationObject(
                seq: entry.seq, type: entry.type, messageID: entry.message, data: entry.data, channelID: id)
            switch entry.type {
            case .newChannel, .updateChannel:
                guard let record = channels[id] else { break }
                let own = byPair["\(id)|\(entry.user)"]
                operation.channel = system.viewing(as: entry.user).channel(record, membership: own)
            case .newChannelMember:
                guard let record = channels[id], let user = entry.data["user_id"]?.stringValue else { break }
                // Gone again by the time this is read: the membership as it was is not kept, so
                // it shows as a member with no role but the default.
                let membership =
                    byPair["\(id)|\(user)"]
                    ?? MembershipRecord(
                        channelID: id, userID: user, role: .user, joinedAt: record.createdAt)
                operation.membership = system.membership(membership, of: record)
                operation.data["identity_id"] = .string(LayerID.identity(userID: user))
            case .deleteChannelMember:
                if let user = entry.data["user_id"]?.stringValue {
                    operation.data["identity_id"] = .string(LayerID.identity(userID: user))
                }
            case .newChannelMessage:
                operation.channelMessage = entry.message.flatMap { messages[$0] }
            default:
                break
            }
            result[ChangeKey(user: entry.user, seq: entry.seq)] = operation
        }
        return result
    }
}
