import Foundation
import LayerModels
import LayerServer

/// One operation a device queued while it was offline, as `/sync` receives it.
struct ClientOperation: Sendable {
    /// Its place in the request, for error messages.
    var index: Int
    var kind: Kind

    enum Kind: Sendable {
        case newMessage(NewMessage)
        case updateStatus(message: UUID, status: ReceiptStatus)
        case updateTags(message: UUID, tags: [String])
    }

    struct NewMessage: Sendable {
        var id: UUID
        var conversation: UUID
        var parts: ValidatedParts
        var notification: JSONValue?
    }

    var messageID: UUID {
        switch kind {
        case .newMessage(let message): message.id
        case .updateStatus(let message, _), .updateTags(let message, _): message
        }
    }

    var typeName: String {
        switch kind {
        case .newMessage: ChangeType.newMessage.rawValue
        case .updateStatus: ChangeType.updateStatus.rawValue
        case .updateTags: ChangeType.updateTags.rawValue
        }
    }

    /// Checks every operation before anything is applied, then drops duplicates: of several
    /// operations of one type on one message, only the last counts.
    static func parse(_ values: [JSONValue], limit: Int) throws -> [ClientOperation] {
        guard values.count <= limit else {
            throw APIError.invalid("operations", "At most \(limit) operations go in one request.")
        }
        let parsed = try values.enumerated().map { index, value in
            try ClientOperation(index: index, value: value)
        }
        var last: [String: Int] = [:]
        for (position, operation) in parsed.enumerated() {
            last["\(operation.messageID) \(operation.typeName)"] = position
        }
        return parsed.enumerated().filter { last["\($1.messageID) \($1.typeName)"] == $0 }.map(\.element)
    }

    init(index: Int, kind: Kind) {
        self.index = index
        self.kind = kind
    }

    init(index: Int, value: JSONValue) throws {
        self.index = index
        let field = "operations.\(index)"
        guard case .object(let object) = value else {
            throw APIError.invalid(field, "Each operation is an object.")
        }
        func string(_ key: String) throws -> String {
            guard let value = object[key] else {
                throw APIError(.missingProperty, "The operation needs '\(key)'.", property: "\(field).\(key)")
            }
            guard let text = value.stringValue else { throw APIError.invalid("\(field).\(key)", "'\(key)' is a string.") }
            return text
        }
        func id(_ key: String, _ collection: LayerID.Collection) throws -> UUID {
            let text = try string(key)
            guard let id = LayerID(parsing: text, as: collection) else {
                throw APIError.invalid("\(field).\(key)", "'\(text)' is not a \(collection.rawValue) id.")
            }
            return id.uuid
        }
        let type = try string("type")
        let allowed: Set<String>
        switch type {
        case ChangeType.newMessage.rawValue:
            allowed = ["type", "message_id", "conversation_id", "parts", "notification", "off_the_record"]
            let message = try id("message_id", .messages)
            let parts = try (object["parts"] ?? .null).decode([PartInput].self, property: "\(field).parts")
            var validated = try PartRules.validate(parts, messageID: message, property: "\(field).parts")
            switch object["off_the_record"] {
            case nil, .null, .bool(false): break
            case .bool(true):
                guard !MessageResponse.isResponse(validated.parts) else {
                    throw APIError.invalid(
                        "\(field).off_the_record", "A response updates the message it answers: it is never off the record.")
                }
                validated.offTheRecord = true
            default: throw APIError.invalid("\(field).off_the_record", "off_the_record is true or false.")
            }
            kind = .newMessage(
                NewMessage(
                    id: message, conversation: try id("conversation_id", .conversations), parts: validated,
                    notification: object["notification"] == .null ? nil : object["notification"]))
        case ChangeType.updateStatus.rawValue:
            allowed = ["type", "message_id", "status"]
            let status = try string("status")
            guard let parsed = ReceiptStatus(name: status), parsed > .sent else {
                throw APIError.invalid("\(field).status", "status is 'delivered' or 'read'; it never goes back to '\(status)'.")
            }
            kind = .updateStatus(message: try id("message_id", .messages), status: parsed)
        case ChangeType.updateTags.rawValue:
            allowed = ["type", "message_id", "tags"]
            guard case .array(let values)? = object["tags"], (1...32).contains(values.count) else {
                throw APIError.invalid("\(field).tags", "tags is an array of 1 to 32 strings.")
            }
            let tags = try values.map { value in
                guard let tag = value.stringValue, (1...64).contains(tag.count), !tag.contains("\u{0}") else {
                    throw APIError.invalid("\(field).tags", "A tag is a string of 1 to 64 characters.")
                }
                return tag
            }
            kind = .updateTags(message: try id("message_id", .messages), tags: Array(Set(tags)).sorted())
        default:
            throw APIError.invalid(
                "\(field).type", "'\(type)' is not an operation a device can send: new_message, update_status or update_tags.")
        }
        if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.invalid("\(field).\(unknown)", "'\(unknown)' is not a property of a \(type) operation.")
        }
    }
}
