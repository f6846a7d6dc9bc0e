import Foundation
import LayerModels
import LayerServer

/// One line of an export archive: an event in the shape of a version 1.0 webhook payload,
/// `{"event": {"type", "created_at", "id", "actor"}, "message" | "conversation": …}`.
/// Participants are user ids, as in 1.0. A participants change also names who was added and
/// removed (`changes`).
struct ExportLine: Encodable, Sendable {
    var event: Event
    var message: Message?
    var conversation: Conversation?
    var changes: Changes?

    struct Event: Encodable, Sendable {
        var type: String
        var createdAt: Date
        /// The same in every export that holds the event.
        var id: String
        /// `{"user_id"}` or `{"name"}`; null when not known.
        @Nullable var actor: [String: String]?

        enum CodingKeys: String, CodingKey {
            case type, id, actor
            case createdAt = "created_at"
        }
    }

    struct Message: Encodable, Sendable {
        var id: String
        var conversation: [String: String]
        var position: Int64
        var parts: [Part]
        var offTheRecord: Bool
        var sentAt: Date
        var sender: [String: String]
        @Nullable var notification: JSONValue?

        enum CodingKeys: String, CodingKey {
            case id, conversation, position, parts, sender, notification
            case offTheRecord = "off_the_record"
            case sentAt = "sent_at"
        }
    }

    struct Part: Encodable, Sendable {
        var id: String
        var mimeType: String
        var body: String? = nil
        var encoding: String? = nil
        var content: Content? = nil

        struct Content: Encodable, Sendable {
            var id: String
            var size: Int64
        }

        enum CodingKeys: String, CodingKey {
            case id, body, encoding, content
            case mimeType = "mime_type"
        }
    }

    struct Conversation: Encodable, Sendable {
        var id: String
        var createdAt: Date
        var distinct: Bool
        var participants: [String]
        var metadata: JSONValue

        enum CodingKeys: String, CodingKey {
            case id, distinct, participants, metadata
            case createdAt = "created_at"
        }
    }

    struct Changes: Encodable, Sendable {
        var added: [String]
        var removed: [String]
    }
}

extension ExportLine {
    init(_ row: ExportRepository.EventRow) {
        let conversationID = LayerID(.conversations, row.conversationID).uri
        let actor = row.actorID.map { ["user_id": $0] } ?? row.actorName.map { ["name": $0] }
        var key = "\(row.event.rawValue)|\(row.conversationID.lowercased)|\(row.messageID?.lowercased ?? "")"
        key += "|\(row.actorID ?? "")|\(row.at.timeIntervalSince1970)"
        event = Event(type: row.event.rawValue, createdAt: row.at, id: Self.eventID(key), actor: actor)
        if let messageID = row.messageID, let stored = row.message {
            let uri = LayerID(.messages, messageID).uri
            message = Message(
                id: uri, conversation: ["id": conversationID], position: stored.position,
                // An off-the-record message's parts leave without their bodies and content.
                parts: stored.parts.map { part in
                    stored.offTheRecord
                        ? Part(id: "\(uri)/parts/\(part.id.lowercased)", mimeType: part.mimeType)
                        : Part(
                            id: "\(uri)/parts/\(part.id.lowercased)", mimeType: part.mimeType, body: part.body,
                            encoding: part.encoding,
                            content: part.contentID.map { Part.Content(id: LayerID(.content, $0).uri, size: part.size ?? 0) })
                }, offTheRecord: stored.offTheRecord, sentAt: stored.sentAt,
                sender: stored.senderID.map { ["user_id": $0] } ?? ["name": stored.senderName ?? ""],
                notification: stored.notification)
        } else {
            conversation = Conversation(
                id: conversationID, createdAt: row.conversationCreatedAt, distinct: row.isDistinct,
                participants: row.participants, metadata: row.metadata)
            if row.event == .conversationUpdatedParticipants {
                changes = Changes(added: row.added, removed: row.removed)
            }
        }
    }

    /// A UUID made from the event's kind, objects, actor and time.
    static func eventID(_ key: String) -> String {
        UUID(derivedFrom: key).lowercased
    }
}
