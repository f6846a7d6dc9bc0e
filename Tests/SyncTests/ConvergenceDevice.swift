import Foundation
import LayerModels
import LayerTesting
import Testing

/// JSON as one short line, for a report.
func compact(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "\(value)"
}

/// What one device of a user holds, built only from what `POST /sync` gave it: the rules a client
/// follows to apply each operation of the changelog (or of a snapshot) to its local copy.
struct DeviceState: Equatable {
    struct Conversation: Equatable {
        var participants: [String]
        var metadata: JSONValue
        var distinct: Bool
        var privateMetadata: JSONValue
    }

    struct Message: Equatable {
        var conversation: String
        var position: Int
        var sender: String
        var parts: [String]
        /// Every status beyond `sent`, by identity id.
        var recipientStatus: [String: String]
        var isUnread: Bool
    }

    /// What a conversation object says about the messages of it; a device derives it from its own.
    struct Summary: Equatable {
        var total: Int
        var unread: Int
        var last: String?
    }

    var conversations: [String: Conversation] = [:]
    var messages: [String: Message] = [:]
    var tags: [String: [String]] = [:]
    /// Only for a state read from a snapshot: the counts its conversation objects carried.
    var summaries: [String: Summary] = [:]

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.conversations == rhs.conversations && lhs.messages == rhs.messages && lhs.heldTags == rhs.heldTags
    }

    /// The tags of the messages the device holds (tags of a message it never had or no longer has
    /// show nowhere).
    var heldTags: [String: [String]] {
        tags.filter { messages[$0.key] != nil && !$0.value.isEmpty }
    }

    /// The summary of each conversation as the device's own messages give it.
    var derivedSummaries: [String: Summary] {
        var result: [String: Summary] = [:]
        for id in conversations.keys {
            let mine = messages.filter { $0.value.conversation == id }
            let last = mine.max { $0.value.position < $1.value.position }?.key
            result[id] = Summary(total: mine.count, unread: mine.values.filter(\.isUnread).count, last: last)
        }
        return result
    }

    private static let statusOrder = ["sent": 0, "delivered": 1, "read": 2]

    private static func raise(_ current: String?, to status: String) -> String {
        guard let current, (statusOrder[current] ?? 0) > (statusOrder[status] ?? 0) else { return status }
        return current
    }

    static func conversation(_ object: JSONValue) -> Conversation {
        Conversation(
            participants: (object["participants"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }.sorted(),
            metadata: object["metadata"] ?? .null, distinct: object["distinct"]?.boolValue ?? false,
            privateMetadata: object["private_metadata"] ?? .null)
    }

    static func message(_ object: JSONValue) -> Message {
        let sender = object["sender"]?["id"]?.stringValue ?? "name:\(object["sender"]?["name"]?.stringValue ?? "?")"
        // A participant without a status has the message as sent: who is listed as `sent` follows
        // from who is in the conversation, which the device knows from the conversation itself.
        var statuses: [String: String] = [:]
        if case .object(let fields)? = object["recipient_status"] {
            for (identity, status) in fields where status != "sent" { statuses[identity] = status.stringValue ?? "?" }
        }
        return Message(
            conversation: object["conversation"]?["id"]?.stringValue ?? "?", position: object["position"]?.intValue ?? -1,
            sender: sender,
            parts: (object["parts"]?.arrayValue ?? []).map {
                "\($0["mime_type"]?.stringValue ?? "?")|\($0["body"]?.stringValue ?? "")"
            }.sorted(),
            recipientStatus: statuses, isUnread: object["is_unread"]?.boolValue ?? false)
    }

    private mutating func forget(messagesOf conversation: String, upTo position: Int = .max) {
        for (id, message) in messages where message.conversation == conversation && message.position <= position {
            messages[id] = nil
            tags[id] = nil
        }
    }

    /// Applies one operation as `viewer`'s device does. When a conversation arrives that may have
    /// history (the device was added to it), the device reads that history from the messages list
    /// through `history`, which answers nil when the conversation is gone.
    mutating func apply(
        _ operation: JSONValue, viewer: String, history: (@Sendable (String) async throws -> [JSONValue]?)?
    ) async throws {
        let viewerIdentity = LayerID.identity(userID: viewer)
        let conversationID = operation["conversation_id"]?.stringValue ?? "?"
        let messageID = operation["message_id"]?.stringValue ?? "?"
        switch operation["type"]?.stringValue {
        case "new_conversation":
            guard let object = operation["conversation"] else { return }
            conversations[conversationID] = Self.conversation(object)
            if let summary = Self.summary(object) { summaries[conversationID] = summary }
            if let history, let earlier = try await history(conversationID) {
                for (id, message) in messages where message.conversation == conversationID { messages[id] = nil }
                for object in earlier {
                    if let id = object["id"]?.stringValue { messages[id] = Self.message(object) }
                }
            }
        case "update_conversation":
            guard let object = operation["conversation"] else { return }
            conversations[conversationID] = Self.conversation(object)
        case "delete_conversation":
            conversations[conversationID] = nil
            if operation["mode"] == "my_devices", let upTo = operation["from_position"]?.intValue {
                forget(messagesOf: conversationID, upTo: upTo)
            } else {
                forget(messagesOf: conversationID)
            }
        case "new_message":
            guard let object = operation["message"] else { return }
            messages[messageID] = Self.message(object)
            // A snapshot gives a message with the user's tags of it.
            if let given = operation["tags"]?.arrayValue { tags[messageID] = given.compactMap(\.stringValue) }
        case "update_status":
            guard let identity = operation["identity_id"]?.stringValue, let status = operation["status"]?.stringValue else {
                return
            }
            let ownRead = identity == viewerIdentity && status == "read"
            if operation["message_id"] != nil {
                guard messages[messageID] != nil else { return }
                messages[messageID]!.recipientStatus[identity] = Self.raise(
                    messages[messageID]!.recipientStatus[identity], to: status)
                if ownRead { messages[messageID]!.isUnread = false }
            } else if let position = operation["position"]?.intValue {
                for (id, message) in messages where message.conversation == conversationID && message.position <= position {
                    messages[id]!.recipientStatus[identity] = Self.raise(message.recipientStatus[identity], to: "read")
                    if ownRead { messages[id]!.isUnread = false }
                }
            }
        case "update_tags":
            let merged = (operation["tags"]?.arrayValue ?? []).compactMap(\.stringValue)
            tags[messageID] = merged
            // A message the user tagged deleted is gone from their devices.
            if merged.contains("deleted") {
                messages[messageID] = nil
                tags[messageID] = nil
            }
        case "delete_message":
            messages[messageID] = nil
            tags[messageID] = nil
        default:
            Issue.record("unknown operation \(operation)")
        }
    }

    static func summary(_ object: JSONValue) -> Summary? {
        guard let total = object["total_message_count"]?.intValue, let unread = object["unread_message_count"]?.intValue
        else { return nil }
        return Summary(total: total, unread: unread, last: object["last_message"]?["id"]?.stringValue)
    }

    /// What differs between two states, one line each, with ids shortened by `name`.
    func differences(from other: DeviceState, name: (String) -> String) -> [String] {
        var lines: [String] = []
        for id in Set(conversations.keys).union(other.conversations.keys).sorted()
        where conversations[id] != other.conversations[id] {
            lines.append(
                "conversation \(name(id)): device \(describe(conversations[id])) / snapshot \(describe(other.conversations[id]))")
        }
        for id in Set(messages.keys).union(other.messages.keys).sorted() where messages[id] != other.messages[id] {
            lines.append("message \(name(id)): device \(describe(messages[id])) / snapshot \(describe(other.messages[id]))")
        }
        let (mine, theirs) = (heldTags, other.heldTags)
        for id in Set(mine.keys).union(theirs.keys).sorted() where mine[id] != theirs[id] {
            lines.append("tags of \(name(id)): device \(mine[id] ?? []) / snapshot \(theirs[id] ?? [])")
        }
        return lines
    }

    private func describe<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "absent" }
}

/// One device of a user, following the changelog from where it started.
struct FollowingDevice {
    let user: UserClient
    let name: String
    /// Nil until the device first syncs (it then starts from a snapshot).
    var anchor: JSONValue?
    var state = DeviceState()

    init(user: UserClient, name: String) {
        self.user = user
        self.name = name
    }

    /// Asks for everything new, in pages of `limit`, applying each operation in order. At anchor 0
    /// (or from a paged snapshot) the answer is a snapshot; it replaces what the device held.
    mutating func sync(limit: Int) async throws {
        let user = self.user
        let history: @Sendable (String) async throws -> [JSONValue]? = { try await Self.history(of: $0, as: user) }
        var anchor = self.anchor ?? 0
        if anchor == 0 { state = DeviceState() }
        while true {
            let inSnapshot = anchor == 0 || anchor.stringValue != nil
            let page = try await user.sync(anchor: anchor, limit: limit, policy: "complete")
            for operation in page["operations"]?.arrayValue ?? [] {
                if inSnapshot {
                    try await state.apply(operation, viewer: user.id, history: nil)
                } else {
                    try await state.apply(operation, viewer: user.id, history: history)
                }
            }
            anchor = page["anchor"] ?? anchor
            if page["more"] != .bool(true) { break }
        }
        self.anchor = anchor
    }

    /// The messages a user sees in a conversation, from the messages list (nil if it is gone).
    private static func history(of conversation: String, as user: UserClient) async throws -> [JSONValue]? {
        var result: [JSONValue] = []
        var from = ""
        while true {
            let response = try await user.get("/\(path(conversation))/messages?page_size=100\(from)")
            guard response.status == 200 else { return nil }
            let page = response.json?.arrayValue ?? []
            result += page
            guard page.count == 100, let last = page.last?["id"]?.stringValue else { return result }
            from = "&from_id=\(last)"
        }
    }
}
