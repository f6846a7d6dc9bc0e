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

    /// The kinds a change records that `events` listen to. A change records one kind for every
    /// version: the 1.0 name where 1.0 has the event, else its 2.0 name (a channel's events,
    /// participants who joined or left, marking all read).
    static func kinds(of events: [String]) -> [String] {
        var kinds: [String] = []
        for event in events {
            for kind in recorded[event] ?? [event] where !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }

    /// The name of a recorded `kind` in `version`.
    static func name(of kind: String, version: String) -> String {
        guard version != "1.0", kind.first?.isLowercase == true else { return kind }
        return recorded.first { $0.value.contains(kind) }?.key ?? kind
    }

    /// Whether events of `kind` are about a conversation's message (rendered in a batch together).
    static func isConversationMessage(_ kind: String) -> Bool {
        ["message.sent", "message.deleted", "message.delivered", "message.read"].contains(kind)
    }

    /// The kinds recorded for the 2.0 events that 1.0 has under other names: a message sent to a
    /// conversation (`message.sent`) or to a channel (`Message.created`), a receipt of one message
    /// or of all up to a position.
    static let recorded: [String: [String]] = [
        "Message.created": ["message.sent", "Message.created"], "Message.deleted": ["message.deleted", "Message.deleted"],
        "Receipt.created": ["message.delivered", "message.read", "Receipt.created"],
        "Conversation.created": ["conversation.created"], "Conversation.updated": ["conversation.updated.metadata"],
        "Conversation.deleted": ["conversation.deleted"],
    ]

    /// The events of 2.0, which 3.0 keeps. Marking all read is a `Receipt.created` of a range of
    /// positions; participants who join or leave are `Participation.created` and `.deleted`.
    static let objectEvents = [
        "Message.created", "Message.updated", "Message.deleted", "Receipt.created", "Conversation.created",
        "Conversation.updated", "Conversation.deleted", "Participation.created", "Participation.deleted",
        "Channel.created", "Channel.updated", "Channel.deleted", "Membership.created", "Membership.deleted",
    ]
}
