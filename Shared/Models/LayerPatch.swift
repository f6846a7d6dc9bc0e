/// One operation of a Layer-Patch document (`application/vnd.layer-patch+json`): an ordered array
/// of these is applied in sequence.
public struct LayerPatchOperation: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case add, remove, set, delete
    }

    public var operation: Kind
    /// A dot-separated path such as `participants` or `metadata.a.b`.
    public var property: String
    public var value: JSONValue?
    /// The Layer id of an object to add, remove or set, instead of a `value`.
    public var id: String?
    public var index: Int?

    public init(operation: Kind, property: String, value: JSONValue? = nil, id: String? = nil, index: Int? = nil) {
        self.operation = operation
        self.property = property
        self.value = value
        self.id = id
        self.index = index
    }

    /// The path split into keys. A literal dot inside a key is written doubled (`a..b`, the
    /// Layer-Patch spec) or escaped (`a\.b`, the 1.0 change-packet docs); both are understood.
    public var path: [String] {
        var keys: [String] = []
        var current = ""
        var characters = Array(property)[...]
        while let character = characters.popFirst() {
            if character == "\\", characters.first == "." {
                current.append(".")
                characters = characters.dropFirst()
            } else if character == "." {
                if characters.first == "." {
                    current.append(".")
                    characters = characters.dropFirst()
                } else {
                    keys.append(current)
                    current = ""
                }
            } else {
                current.append(character)
            }
        }
        keys.append(current)
        return keys
    }
}

extension LayerPatchOperation {
    /// `key` as one key of a path, its dots escaped as the 1.0 change packets wrote them
    /// (`fred\.flinstone`).
    public static func escaped(_ key: String) -> String {
        key.replacingOccurrences(of: ".", with: "\\.")
    }
}
