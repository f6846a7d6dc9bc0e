import Foundation
import LayerModels
import LayerServer

/// A Response message (API 3.0): what the Web XDK's Choice, Buttons, Product and Feedback
/// messages send when a user answers one of them. Its part of type
/// `application/vnd.layer.response-v2+json` names the message answered (`response_to`), the node of
/// that message (`response_to_node_id`, a part's id) and the user's changes to the named states of
/// that node; the server merges them into the node's response summary part, a part of the
/// answered message that every participant holds. The first format,
/// `application/vnd.layer.response+json`, carries `participant_data` (and `shared_data`) merged by
/// key instead.
struct MessageResponse: Sendable, Equatable {
    enum Format: Sendable, Equatable {
        /// `response-v2`: per user and state name, the adds and removes of a CRDT (see ``ResponseState``).
        case changes
        /// `response`: per user, a flat object of values; the last value of a key wins.
        case participantData
    }

    var format: Format
    /// The message answered, in the sender's conversation.
    var target: UUID
    /// The node answered: a part's UUID (or its `node-id` MIME parameter); its root part when nil.
    var node: String?
    var changes: [Change] = []
    var participantData: [String: JSONValue] = [:]
    var sharedData: [String: JSONValue]?
    /// Where the response part sits in the message, for errors (`parts.0.body`).
    var property: String

    /// One operation on a user's state `name` (`operation` add or remove, with the operation's id).
    struct Change: Sendable, Equatable {
        enum Operation: String, Sendable { case add, remove }
        var operation: Operation
        var type: ResponseState.Kind
        var name: String
        var value: JSONValue
        var id: String
    }

    static let changesType = "application/vnd.layer.response-v2+json"
    static let participantDataType = "application/vnd.layer.response+json"
    /// At most this many changes in one response, and this long a state name or operation id.
    static let maxChanges = 64
    static let maxNameLength = 128

    /// The format of a part of this MIME type, if it is a response part.
    static func format(of mimeType: String) -> Format? {
        switch MIMEParameters.essence(mimeType) {
        case changesType: .changes
        case participantDataType: .participantData
        default: nil
        }
    }

    /// Whether any of `parts` is a response part; cheap, for the send path.
    static func isResponse(_ parts: [StoredPart]) -> Bool {
        parts.contains { format(of: $0.mimeType) != nil }
    }

    /// The response the first response part of `parts` carries, checked; 422 naming its body
    /// (`parts.0.body`) when it is not one.
    static func find(in parts: [StoredPart], property: String = "parts") throws -> MessageResponse? {
        guard let index = parts.firstIndex(where: { format(of: $0.mimeType) != nil }) else { return nil }
        let part = parts[index]
        let field = "\(property).\(index).body"
        guard let body = part.body, part.encoding == nil,
            let object = try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)), case .object(let fields) = object
        else { throw APIError.invalid(field, "A response part's body is a JSON object, sent inline.") }
        guard let to = fields["response_to"]?.stringValue,
            let target = LayerID(parsing: to, as: .messages)?.uuid ?? UUID(uuidString: to)
        else { throw APIError.invalid(field, "response_to names the message answered: layer:///messages/<uuid>.") }
        var node: String?
        switch fields["response_to_node_id"] {
        case nil, .null: break
        case .string(let text) where !text.isEmpty && text.count <= maxNameLength:
            // A part's UUID, or its whole id (layer:///messages/<m>/parts/<uuid>).
            node = text.split(separator: "/").last.map(String.init) ?? text
        default: throw APIError.invalid(field, "response_to_node_id is the id of the part answered.")
        }
        var response = MessageResponse(
            format: format(of: part.mimeType)!, target: target, node: node, property: field)
        switch response.format {
        case .changes:
            guard case .array(let list) = fields["changes"] ?? .null, (1...maxChanges).contains(list.count) else {
                throw APIError.invalid(field, "changes is a list of 1 to \(maxChanges) operations.")
            }
            response.changes = try list.enumerated().map { try change($1, field: field, index: $0) }
        case .participantData:
            guard case .object(let data) = fields["participant_data"] ?? .null else {
                throw APIError.invalid(field, "participant_data is an object of the values answered.")
            }
            response.participantData = data
            switch fields["shared_data"] {
            case nil, .null: break
            case .object(let shared): response.sharedData = shared
            default: throw APIError.invalid(field, "shared_data is an object.")
            }
        }
        return response
    }

    /// Operation `index` of `changes`, as the XDK serializes it: `{"operation", "type", "name",
    /// "value", "id"}`. Errors name the part's body `field` and say which operation.
    static func change(_ value: JSONValue, field: String, index: Int) throws -> Change {
        func refuse(_ message: String) -> APIError { APIError.invalid(field, "changes.\(index): \(message)") }
        guard case .object(let op) = value else { throw refuse("an operation is an object.") }
        guard let operation = op["operation"]?.stringValue.flatMap(Change.Operation.init(rawValue:)) else {
            throw refuse("operation is 'add' or 'remove'.")
        }
        guard let type = op["type"]?.stringValue.flatMap(ResponseState.Kind.init(rawValue:)) else {
            throw refuse("type is one of FWW, LWW, LWWN and Set.")
        }
        guard let name = op["name"]?.stringValue, !name.isEmpty, name.count <= maxNameLength else {
            throw refuse("name is the state's name, 1 to \(maxNameLength) characters.")
        }
        guard let id = op["id"]?.stringValue, !id.isEmpty, id.count <= maxNameLength else {
            throw refuse("id is the operation's id, 1 to \(maxNameLength) characters.")
        }
        return Change(operation: operation, type: type, name: name, value: op["value"] ?? .null, id: id)
    }
}

/// One user's value of one named state in a response summary: the adds still standing, each
/// with the ids of the operations that added its value, and the ids of the operations undone
/// or refused. This is the XDK's CRDT: applying the same operations in any order, or twice,
/// leaves the same value.
struct ResponseState: Codable, Sendable, Equatable {
    enum Kind: String, Sendable {
        /// First writer wins: later adds are refused; nothing is removed.
        case firstWriterWins = "FWW"
        /// Last writer wins: an add replaces the value; nothing is removed.
        case lastWriterWins = "LWW"
        /// Last writer wins, and the value may be removed.
        case lastWriterWinsNullable = "LWWN"
        /// Any number of values, each added and removed on its own.
        case set = "Set"
    }

    struct Add: Codable, Sendable, Equatable {
        var value: JSONValue
        var ids: [String]
    }

    var adds: [Add] = []
    var removes: [String] = []

    /// Applies one operation.
    mutating func apply(_ change: MessageResponse.Change) {
        switch change.operation {
        case .add: add(change.value, id: change.id, kind: change.type)
        case .remove: remove(change.id, kind: change.type)
        }
    }

    private mutating func add(_ value: JSONValue, id: String, kind: Kind) {
        guard !removes.contains(id), !adds.contains(where: { $0.ids.contains(id) }) else { return }
        switch kind {
        case .firstWriterWins:
            if adds.isEmpty { adds = [Add(value: value, ids: [id])] } else { removes.append(id) }
        case .lastWriterWins, .lastWriterWinsNullable:
            removes += adds.flatMap(\.ids)
            adds = [Add(value: value, ids: [id])]
        case .set:
            if let index = adds.firstIndex(where: { $0.value == value }) {
                adds[index].ids.append(id)
            } else {
                adds.append(Add(value: value, ids: [id]))
            }
        }
    }

    private mutating func remove(_ id: String, kind: Kind) {
        guard kind == .lastWriterWinsNullable || kind == .set else { return }
        for index in adds.indices { adds[index].ids.removeAll { $0 == id } }
        adds.removeAll { $0.ids.isEmpty }
        if !removes.contains(id) { removes.append(id) }
    }
}

/// The response summary part of a node: every user's answers to it, updated by each response.
enum ResponseSummary {
    static let changesType = "application/vnd.layer.responsesummary-v2+json"
    static let participantDataType = "application/vnd.layer.responsesummary+json"
    /// A summary grows with each user and each change of mind; past this size, responses are refused.
    static let maxBytes = 256 * 1024

    static func type(_ format: MessageResponse.Format) -> String {
        format == .changes ? changesType : participantDataType
    }

    /// The MIME type of the summary of `node`, as the XDK looks for it.
    static func mimeType(_ format: MessageResponse.Format, node: String) -> String {
        "\(type(format)); role=response_summary; parent-node-id=\(node)"
    }

    /// Whether `part` is the summary of `node` in `format`.
    static func isSummary(_ part: StoredPart, of node: String, _ format: MessageResponse.Format) -> Bool {
        MIMEParameters.essence(part.mimeType) == type(format)
            && MIMEParameters.value("parent-node-id", in: part.mimeType)?.lowercased() == node.lowercased()
    }

    /// The id of a new summary part: derived from the message and node, so that it is the same
    /// wherever it is computed.
    static func partID(message: UUID, node: String) -> UUID {
        UUID(derivedFrom: "response-summary/\(message.lowercased)/\(node.lowercased())")
    }

    /// The summary `body` (nil: none yet) with `user`'s response merged in.
    static func merged(_ body: String?, with response: MessageResponse, from user: String) throws -> String {
        let text: String
        switch response.format {
        case .changes:
            var users = decoded([String: [String: ResponseState]].self, body) ?? [:]
            for change in response.changes {
                users[user, default: [:]][change.name, default: ResponseState()].apply(change)
            }
            text = try encoded(users)
        case .participantData:
            var summary = decoded([String: JSONValue].self, body) ?? [:]
            var everyone = fields(summary["participant_data"])
            var own = fields(everyone[user])
            own.merge(response.participantData) { _, new in new }
            everyone[user] = .object(own)
            summary["participant_data"] = .object(everyone)
            if let shared = response.sharedData {
                var all = fields(summary["shared_data"])
                all.merge(shared) { _, new in new }
                summary["shared_data"] = .object(all)
            }
            text = try encoded(summary)
        }
        guard text.utf8.count <= maxBytes else {
            throw APIError.invalid(response.property, "The response summary of this message is full (\(maxBytes) bytes).")
        }
        return text
    }

    private static func fields(_ value: JSONValue?) -> [String: JSONValue] {
        if case .object(let fields) = value { return fields }
        return [:]
    }

    /// A stored summary as written; a body that is not one (replaced through the part routes) starts afresh.
    private static func decoded<T: Decodable>(_ type: T.Type, _ body: String?) -> T? {
        body.flatMap { try? JSONDecoder().decode(T.self, from: Data($0.utf8)) }
    }

    private static func encoded<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

/// The parameters of a MIME type as the XDK writes them: `type/subtype; role=root; node-id=<uuid>`.
enum MIMEParameters {
    /// `type/subtype`, lowercased, without parameters.
    static func essence(_ mimeType: String) -> String {
        let end = mimeType.firstIndex(of: ";") ?? mimeType.endIndex
        return mimeType[..<end].trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The value of parameter `name`, if it is there.
    static func value(_ name: String, in mimeType: String) -> String? {
        for parameter in mimeType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }
}

extension StoredPart {
    /// The part's node id in the XDK's tree of parts: its `node-id` parameter, else its id.
    var nodeID: String { MIMEParameters.value("node-id", in: mimeType) ?? id.lowercased }
}
