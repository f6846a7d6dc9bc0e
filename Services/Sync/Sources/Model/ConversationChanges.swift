import LayerModels
import LayerServer

/// What one write changed in a conversation, as one user saw it change: kept in the data of that
/// user's `update_conversation` changelog row when the write happens, so that push can send
/// just those properties (reference 5.4), while `POST /sync` still gives the whole conversation.
struct ConversationChanges: Codable, Sendable, Equatable {
    /// Participants who came in and who went out, in the order of the change.
    var added: [String] = []
    var removed: [String] = []
    var metadata: [KeyChange] = []
    var privateMetadata: [KeyChange] = []
    /// The new value of `distinct`, only when it changed.
    var distinct: Bool?

    /// A key set to a value, or deleted (`value` nil).
    struct KeyChange: Codable, Sendable, Equatable {
        var path: [String]
        var value: JSONValue?
    }

    enum CodingKeys: String, CodingKey {
        case added, removed, metadata, distinct
        case privateMetadata = "private_metadata"
    }

    var isEmpty: Bool { self == ConversationChanges() }

    /// The key under which a changelog row keeps them.
    static let dataKey = "changes"

    /// From the data of a changelog row; nil for rows written before changes were recorded.
    init?(data: [String: JSONValue]) {
        guard let changes = try? data[Self.dataKey]?.decode(Self.self, property: Self.dataKey) else { return nil }
        self = changes
    }

    init(
        added: [String] = [], removed: [String] = [], metadata: [KeyChange] = [], privateMetadata: [KeyChange] = [],
        distinct: Bool? = nil
    ) {
        self.added = added
        self.removed = removed
        self.metadata = metadata
        self.privateMetadata = privateMetadata
        self.distinct = distinct
    }

    /// The keys whose values differ between two versions of a metadata object: `set` where a
    /// value is new or different (nested objects compared key by key, so one edit deep inside
    /// is one change), `delete` where a key went away. Keys come sorted, deletions first.
    static func metadataChanges(from old: JSONValue, to new: JSONValue, at path: [String] = []) -> [KeyChange] {
        guard old != new else { return [] }
        guard case .object(let before) = old, case .object(let after) = new else {
            return [KeyChange(path: path, value: new)]
        }
        let deleted = before.keys.filter { after[$0] == nil }.sorted().map { KeyChange(path: path + [$0], value: nil) }
        let changed = after.keys.sorted().flatMap { key -> [KeyChange] in
            guard let previous = before[key] else { return [KeyChange(path: path + [key], value: after[key])] }
            return metadataChanges(from: previous, to: after[key]!, at: path + [key])
        }
        return deleted + changed
    }
}
