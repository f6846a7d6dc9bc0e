import Foundation
import LayerModels

/// The versions of the webhooks protocol and the events each can subscribe to. 1.0 names events
/// after what happened (`message.sent`); 2.0 and 3.0 after the object and the change
/// (`Message.created`), as their Client APIs' change packets do.
enum WebhookEvents {
    static let versions = ["1.0", "2.0", "3.0"]

    /// Every event a webhook of `version` may subscribe to.
    static func names(version: String) -> [String] {
        switch version {
        case "1.0":
            return [
                "message.sent", "message.delivered", "message.read", "message.deleted", "conversation.created",
                "conversation.updated.participants", "conversation.updated.metadata", "conversation.deleted",
            ]
        case "2.0":
            return objectEvents
        default:
            return objectEvents + ["MessagePart.created", "MessagePart.updated", "MessagePart.deleted"]
        }
    }

    /// The kinds a change records (the 1.0 names, for every version) that `events` listen to.
    static func kinds(of events: [String]) -> [String] {
        var kinds: [String] = []
        for event in events {
            for kind in renamed[event] ?? [event] where !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }

    /// The name of a recorded `kind` in `version`.
    static func name(of kind: String, version: String) -> String {
        guard version != "1.0" else { return kind }
        return renamed.first { $0.value.first == kind }?.key ?? kind
    }

    /// The 2.0 names of what 1.0 names otherwise.
    static let renamed: [String: [String]] = [
        "Message.created": ["message.sent"], "Message.deleted": ["message.deleted"],
        "Receipt.created": ["message.delivered", "message.read"], "Conversation.created": ["conversation.created"],
        "Conversation.updated": ["conversation.updated.metadata"], "Conversation.deleted": ["conversation.deleted"],
        "Participation.created": ["conversation.updated.participants"],
    ]

    /// The events of 2.0, which 3.0 keeps. Marking all read is a `Receipt.created` of a range of
    /// positions; participants who join or leave are `Participation.created` and `.deleted`.
    static let objectEvents = [
        "Message.created", "Message.updated", "Message.deleted", "Receipt.created", "Conversation.created",
        "Conversation.updated", "Conversation.deleted", "Participation.created", "Participation.deleted",
        "Channel.created", "Channel.updated", "Channel.deleted", "Membership.created", "Membership.deleted",
    ]
}
