import Foundation
import LayerModels
import LayerServer

/// A message part as a client sends it.
struct PartInput: Decodable, Sendable {
    var id: String?
    var mimeType: String?
    var body: String?
    var encoding: String?
    var content: ContentReference?

    struct ContentReference: Decodable, Sendable {
        var id: String
        var size: Int64?
    }

    enum CodingKeys: String, CodingKey {
        case id, body, encoding, content
        case mimeType = "mime_type"
    }
}

/// The body of a message create, in the Client API, the Server API and `/sync`.
struct MessageInput: Decodable, Sendable {
    var id: String?
    var parts: [PartInput]?
    var notification: JSONValue?
    /// Server API only: `sender_id` (an identity) or `sender` (`{"user_id"}` or `{"name"}`).
    var senderID: String?
    var sender: SenderInput?
    /// Server API only: a delayed send (see ``SendSchedule``).
    var schedule: JSONValue?
    var offTheRecord: Bool?

    struct SenderInput: Decodable, Sendable {
        var userID: String?
        var name: String?
        enum CodingKeys: String, CodingKey {
            case name
            case userID = "user_id"
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, parts, notification, sender, schedule
        case senderID = "sender_id"
        case offTheRecord = "off_the_record"
    }

    static let clientKeys: Set<String> = ["id", "parts", "notification", "off_the_record"]
    static let serverKeys: Set<String> = ["parts", "notification", "sender_id", "sender", "schedule", "off_the_record"]
    /// The Server API acting as a user: the user of the path is the sender.
    static let userKeys: Set<String> = ["parts", "notification", "schedule", "off_the_record"]
}

/// Checked parts ready to store, whether the message is off the record, and the rich content
/// they reference.
struct ValidatedParts: Sendable {
    var parts: [StoredPart]
    /// Sent with `"off_the_record": true`: stored and delivered as sent, never indexed, and left
    /// out of push notifications, webhook payloads and exports.
    var offTheRecord = false
    var contentIDs: [UUID] { parts.compactMap(\.contentID) }
}

enum PartRules {
    /// Inline bodies are limited to 2 KB after base64 decoding; larger payloads go to `/content`.
    static let maxInlineBytes = 2048
    static let maxParts = 64

    /// Checks `parts` of message `messageID`; errors name the offending field, e.g. `parts.1.mime_type`.
    static func validate(_ parts: [PartInput]?, messageID: UUID, property: String = "parts") throws -> ValidatedParts {
        guard let parts else { throw APIError(.missingProperty, "A message needs parts.", property: property) }
        guard (1...maxParts).contains(parts.count) else {
            throw APIError.invalid(property, "A message has 1 to \(maxParts) parts.")
        }
        var seen = Set<UUID>()
        let stored = try parts.enumerated().map { index, part in
            let field = "\(property).\(index)"
            let id = try partID(part.id, messageID: messageID, property: "\(field).id")
            guard seen.insert(id).inserted else {
                throw APIError.invalid("\(field).id", "Two parts have the id \(id.lowercased).")
            }
            return try validate(part, id: id, field: field)
        }
        // A response part is checked here, as it is sent; it is applied when the message is stored.
        _ = try MessageResponse.find(in: stored, property: property)
        return ValidatedParts(parts: stored)
    }

    /// Checks one part, whose id is `id`; errors name its fields under `field` (`parts.1`), or
    /// alone when `field` is empty (a part sent by itself).
    static func validate(_ part: PartInput, id: UUID, field: String) throws -> StoredPart {
        let field = field.isEmpty ? "" : field + "."
        guard let mimeType = part.mimeType else {
            throw APIError(.missingProperty, "Every part needs a mime_type.", property: "\(field)mime_type")
        }
        try validateMIMEType(mimeType, property: "\(field)mime_type")
        if let encoding = part.encoding, encoding != "base64" {
            throw APIError.invalid("\(field)encoding", "The only encoding is 'base64'.")
        }
        switch (part.body, part.content) {
        case (nil, nil):
            throw APIError(.missingProperty, "A part needs a body or a content.", property: "\(field)body")
        case (_?, _?):
            throw APIError.invalid("\(field)content", "A part has either a body or a content, not both.")
        case (let body?, nil):
            let size: Int
            if part.encoding == "base64" {
                guard let bytes = Data(base64Encoded: body) else {
                    throw APIError.invalid("\(field)body", "The body is not valid base64.")
                }
                size = bytes.count
            } else {
                size = body.utf8.count
            }
            guard size <= maxInlineBytes else {
                throw APIError.invalid(
                    "\(field)body",
                    "An inline body is at most \(maxInlineBytes) bytes (this one is \(size)); upload larger payloads to /content."
                )
            }
            return StoredPart(id: id, mimeType: mimeType, body: body, encoding: part.encoding)
        case (nil, let content?):
            guard let contentID = LayerID(parsing: content.id, as: .content) else {
                throw APIError.invalid("\(field)content.id", "'\(content.id)' is not a content id.")
            }
            return StoredPart(id: id, mimeType: mimeType, contentID: contentID.uuid, size: content.size)
        }
    }

    /// `type/subtype`, optionally with parameters: `text/plain`, `application/x.card+json;v=2`.
    static func validateMIMEType(_ text: String, property: String) throws {
        let essence = text.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let halves = essence.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        let token = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "!#$&^_.+-*'%`|~"))
        guard text.count <= 255, halves.count == 2,
            halves.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(token.contains) })
        else {
            throw APIError.invalid(property, "'\(text)' is not a MIME type of the form type/subtype.")
        }
    }

    /// A client-chosen part id: a bare UUID or `layer:///messages/<message>/parts/<uuid>`.
    static func partID(_ text: String?, messageID: UUID, property: String) throws -> UUID {
        guard let text else { return UUID() }
        let prefix = "layer:///messages/"
        if text.hasPrefix(prefix) {
            let rest = text.dropFirst(prefix.count).split(separator: "/")
            guard rest.count == 3, rest[1] == "parts", UUID(uuidString: String(rest[0])) == messageID,
                let id = UUID(uuidString: String(rest[2]))
            else { throw APIError.invalid(property, "'\(text)' is not a part id of this message.") }
            return id
        }
        guard let id = UUID(uuidString: text) else { throw APIError.invalid(property, "'\(text)' is not a part id.") }
        return id
    }
}

/// A user named in a request: an identity id (`layer:///identities/<user>`), a bare user id, or
/// an object with one of those as `id` or `user_id`.
func userID(named value: JSONValue, property: String) throws -> String {
    switch value {
    case .string(let text):
        return try userID(fromText: text, property: property)
    case .object(let object):
        if let id = object["id"]?.stringValue { return try userID(fromText: id, property: property) }
        if let id = object["user_id"]?.stringValue { return try userID(fromText: id, property: property) }
        throw APIError.invalid(property, "An identity is given by its id or user_id.")
    default:
        throw APIError.invalid(property, "An identity is given as a string id.")
    }
}

func userID(fromText text: String, property: String) throws -> String {
    try IdentityReference.userID(text, property: property)
}

/// The largest a conversation's shared metadata, or one participant's private metadata, may be
/// in all: its JSON text, in bytes.
let maxMetadataBytes = 64 * 1024

/// Refuses metadata whose whole JSON text is over ``maxMetadataBytes``, naming `property` (413).
func checkMetadataSize(_ value: JSONValue, property: String) throws {
    let size = value.jsonText.utf8.count
    guard size <= maxMetadataBytes else {
        throw APIError(
            .requestTooLarge, "'\(property)' would take \(size) bytes; metadata is at most \(maxMetadataBytes) bytes in all.",
            property: property, extra: ["max_bytes": .number(Double(maxMetadataBytes))])
    }
}

/// Conversation metadata: values are strings or objects of the same kind, nothing else.
func validateMetadata(_ value: JSONValue, property: String, depth: Int = 0) throws {
    switch value {
    case .string:
        return
    case .object(let object):
        guard depth < 8 else { throw APIError.invalid(property, "Metadata nests at most 8 levels deep.") }
        for (key, child) in object {
            guard !key.isEmpty else { throw APIError.invalid(property, "Metadata keys must not be empty.") }
            try validateMetadata(child, property: "\(property).\(key)", depth: depth + 1)
        }
    default:
        throw APIError.invalid(property, "Metadata values are strings or objects.")
    }
}
