import Foundation
import LayerModels
import LayerServer

/// The JSON of WebSocket packets (reference 5): bodies are encoded once per user, envelopes once
/// per device (each has its own counter).
enum Packets {
    static func json(_ value: some Encodable) -> String {
        // Our own types always encode; a failure here would be a programming error.
        try! StreamingJSONEncoder.string(value)
    }

    static func envelope(type: String, counter: Int, timestamp: String, body: String) -> String {
        "{\"type\":\"\(type)\",\"timestamp\":\"\(timestamp)\",\"counter\":\(counter),\"body\":\(body)}"
    }

    struct ObjectReference: Encodable, Sendable {
        var type: String
        var id: String
        var url: String
    }

    /// One Layer-Patch operation: mostly `set` with a value or, for `last_message`, an id.
    struct PatchOperation: Encodable, Sendable {
        var operation = "set"
        var property: String
        var id: String?
        var value: JSONValue?

        static func set(_ property: String, _ value: JSONValue) -> Self { .init(property: property, value: value) }
    }

    struct Change<Data: Encodable>: Encodable {
        var operation: String
        var object: ObjectReference
        var data: Data
    }

    /// A change packet; `update` is said `patch` in 1.0.
    static func change(_ operation: String, _ object: ObjectReference, _ data: some Encodable) -> (type: String, body: String) {
        let said = operation == "update" ? APIVersion.current.updateOperation : operation
        return ("change", json(Change(operation: said, object: object, data: data)))
    }

    /// Participants as a patch sets them: identities, or in 1.0 user ids.
    static func participants(_ identities: [BasicIdentityObject]) -> JSONValue {
        guard APIVersion.current.usesIdentities else { return .array(identities.map { .string($0.userID) }) }
        return (try? jsonValue(identities)) ?? .array([])
    }

    /// A response to a request: the result or the error as `data`, encoded once, with the rest.
    static func response(requestID: String?, method: String?, success: Bool, data: (any Encodable & Sendable)?) -> String {
        json(Response(data: data, method: method, requestID: requestID, success: success))
    }

    private struct Response: Encodable {
        var data: (any Encodable & Sendable)?
        var method: String?
        var requestID: String?
        var success: Bool

        enum CodingKeys: String, CodingKey {
            case data, method, success
            case requestID = "request_id"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if let data { try container.encode(data, forKey: .data) }
            try container.encodeIfPresent(method, forKey: .method)
            try container.encodeIfPresent(requestID, forKey: .requestID)
            try container.encode(success, forKey: .success)
        }
    }

    /// What one changelog operation becomes on a WebSocket, as `viewer` sees it. `unread` is the
    /// conversation's unread count for the viewer after the change, when it may have moved.
    static func packets(
        for operation: OperationObject, viewer: String, unread: Int?, urls: URLBuilder
    ) -> [(type: String, body: String)] {
        let conversation = operation.conversationID.map {
            ObjectReference(type: "Conversation", id: LayerID(.conversations, $0).uri, url: urls.conversation($0))
        }
        let message = operation.messageID.map {
            ObjectReference(
                type: "Message", id: LayerID(.messages, $0).uri, url: urls.message($0, in: operation.conversationID, viewer: nil))
        }
        var unreadPatch: [PatchOperation] {
            unread.map { [.set("unread_message_count", .number(Double($0)))] } ?? []
        }
        switch operation.type {
        case .newMessage:
            guard let message, let object = operation.message else { return [] }
            var packets = [change("create", message, object)]
            if let conversation {
                let last = PatchOperation(property: "last_message", id: message.id)
                packets.append(change("update", conversation, [last] + unreadPatch))
            }
            return packets
        case .updateStatus:
            guard let user = operation.data["user_id"]?.stringValue, let status = operation.data["status"] else { return [] }
            let identity = LayerID.identity(userID: user)
            var packets: [(type: String, body: String)] = []
            if let message {
                let key = APIVersion.current.usesIdentities ? identity : LayerPatchOperation.escaped(user)
                var patch = [PatchOperation.set("recipient_status.\(key)", status)]
                if user == viewer, status.stringValue == ReceiptStatus.read.name { patch.append(.set("is_unread", .bool(false))) }
                packets.append(change("update", message, patch))
            } else if let conversation, let position = operation.data["position"] {
                struct MarkAllRead: Encodable {
                    var method = "Conversation.mark_all_read"
                    var object: [String: String]
                    var data: JSONValue
                }
                let data = JSONValue.object(["position": position, "identity": .object(["id": .string(identity)])])
                packets.append(("operation", json(MarkAllRead(object: ["id": conversation.id], data: data))))
            }
            if let conversation, user == viewer, unread != nil { packets.append(change("update", conversation, unreadPatch)) }
            return packets
        case .updateTags:
            guard let message, let tags = operation.data["tags"] else { return [] }
            return [change("update", message, [PatchOperation.set("tags", tags)])]
        case .newConversation:
            guard let conversation, let object = operation.conversation else { return [] }
            return [change("create", conversation, object)]
        case .updateConversation:
            guard let conversation, let object = operation.conversation else { return [] }
            if let changes = operation.changes {
                let patch = changes.operations
                return patch.isEmpty ? [] : [change("update", conversation, patch)]
            }
            // A change logged before changes were recorded: the whole state, as it was sent then.
            var patch: [PatchOperation] = [
                .set("participants", participants(object.participants)),
                .set("metadata", object.metadata),
                .set("distinct", .bool(object.isDistinct)),
            ]
            if let fields = object.viewer {
                patch.append(.set("private_metadata", fields.privateMetadata))
                patch.append(.set("unread_message_count", .number(Double(fields.unreadMessageCount))))
            }
            return [change("update", conversation, patch)]
        case .deleteConversation:
            guard let conversation else { return [] }
            let data = JSONValue.object([
                "mode": operation.data["mode"] ?? .string("all_participants"),
                "from_position": operation.data["from_position"] ?? .null,
            ])
            return [change("delete", conversation, data)]
        case .deleteMessage:
            guard let message else { return [] }
            return [change("delete", message, JSONValue.object(["mode": operation.data["mode"] ?? .string("all_participants")]))]
        case .newChannel, .updateChannel, .deleteChannel, .newChannelMember, .deleteChannelMember, .newChannelMessage,
            .deleteChannelMessage:
            return channelPackets(for: operation, urls: urls)
        }
    }
}

extension ConversationPatch {
    /// The Layer-Patch of the change, in the version being rendered: participants added (2.0+ by
    /// `id` with the BasicIdentity as `value`, 1.0 by user id) and removed, each key of the
    /// metadata and private metadata set or deleted, and `distinct` when it changed.
    var operations: [Packets.PatchOperation] {
        typealias Operation = Packets.PatchOperation
        let byIdentity = APIVersion.current.usesIdentities
        var patch: [Operation] = []
        for identity in added {
            patch.append(
                byIdentity
                    ? Operation(operation: "add", property: "participants", id: identity.id, value: try? jsonValue(identity))
                    : Operation(operation: "add", property: "participants", value: .string(identity.userID)))
        }
        for user in changes.removed {
            patch.append(
                byIdentity
                    ? Operation(operation: "remove", property: "participants", id: LayerID.identity(userID: user))
                    : Operation(operation: "remove", property: "participants", value: .string(user)))
        }
        for (root, keys) in [("metadata", changes.metadata), ("private_metadata", changes.privateMetadata)] {
            for key in keys {
                let property = ([root] + key.path.map(LayerPatchOperation.escaped)).joined(separator: ".")
                if let value = key.value {
                    patch.append(.set(property, value))
                } else {
                    patch.append(Operation(operation: "delete", property: property))
                }
            }
        }
        if let distinct = changes.distinct { patch.append(.set("distinct", .bool(distinct))) }
        return patch
    }
}
