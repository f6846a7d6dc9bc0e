import Foundation
import LayerModels
import LayerServer

extension Packets {
    /// What a channel operation becomes on a WebSocket: the `Channel`, its `Membership`s and its
    /// `Message`s created, updated and deleted as the Web XDK expects them. An update carries
    /// exactly the operations that changed the channel.
    static func channelPackets(for operation: OperationObject, urls: URLBuilder) -> [(type: String, body: String)] {
        guard let channelID = operation.channelID else { return [] }
        let channel = ObjectReference(type: "Channel", id: LayerID(.channels, channelID).uri, url: urls.channel(channelID))
        let message = operation.messageID.map {
            ObjectReference(type: "Message", id: LayerID(.messages, $0).uri, url: urls.channelMessage($0, in: channelID))
        }
        let member = operation.data["user_id"]?.stringValue.map {
            ObjectReference(
                type: "Membership", id: LayerID.membership(of: $0, in: channelID), url: urls.membership(of: $0, in: channelID))
        }
        let mode = JSONValue.object(["mode": operation.data["mode"] ?? .string("all_participants")])
        switch operation.type {
        case .newChannel:
            guard let object = operation.channel else { return [] }
            return [change("create", channel, object)]
        case .updateChannel:
            guard let patch = operation.data["patch"] else { return [] }
            return [change("update", channel, patch)]
        case .deleteChannel:
            return [change("delete", channel, mode)]
        case .newChannelMember:
            guard let member, let object = operation.membership else { return [] }
            return [change("create", member, object)]
        case .deleteChannelMember:
            guard let member else { return [] }
            return [change("delete", member, JSONValue.object([:]))]
        case .newChannelMessage:
            guard let message, let object = operation.channelMessage else { return [] }
            return [change("create", message, object)]
        case .deleteChannelMessage:
            guard let message else { return [] }
            return [change("delete", message, mode)]
        default:
            return []
        }
    }
}
