import LayerModels
import LayerServer

/// Who is making a change: a user through the Client API (or the Server API acting as one), or
/// the app's backend itself through the Server API.
enum Caller: Sendable, Equatable {
    case user(String)
    case app

    var userID: String? {
        if case .user(let id) = self { return id }
        return nil
    }
}

extension JSONValue {
    /// Sets the value at `path` (keys of nested objects), creating missing objects on the way.
    /// Fails when the path runs through something that is not an object.
    func setting(_ path: ArraySlice<String>, to value: JSONValue, property: String) throws -> JSONValue {
        guard let key = path.first else { return value }
        var object: [String: JSONValue]
        switch self {
        case .object(let existing): object = existing
        case .null: object = [:]
        default: throw APIError.invalid(property, "'\(property)' runs through a value that is not an object.")
        }
        object[key] = try (object[key] ?? .null).setting(path.dropFirst(), to: value, property: property)
        return .object(object)
    }

    /// Removes the key at `path`; a missing key is not an error.
    func removing(_ path: ArraySlice<String>) -> JSONValue {
        guard let key = path.first, case .object(var object) = self else { return self }
        if path.count == 1 {
            object[key] = nil
        } else if let child = object[key] {
            object[key] = child.removing(path.dropFirst())
        }
        return .object(object)
    }
}

/// Applies the `metadata…` operations of a Layer-Patch to a metadata object (shared metadata or
/// a user's private metadata): `set` of the whole object or of a nested key, `delete` of a key.
func applyMetadataOperation(_ operation: LayerPatchOperation, to metadata: JSONValue, root: String) throws -> JSONValue {
    let path = operation.path
    let property = operation.property
    let keys = path.dropFirst()
    guard keys.allSatisfy({ !$0.isEmpty }) else { throw APIError.invalid(property, "'\(property)' has an empty key.") }
    switch operation.operation {
    case .set:
        let value = operation.value ?? .null
        if keys.isEmpty {
            if value == .null { return [:] }
            guard case .object = value else { throw APIError.invalid(property, "'\(root)' is set to an object.") }
            try validateMetadata(value, property: property)
            return value
        }
        try validateMetadata(value, property: property)
        return try metadata.setting(keys, to: value, property: property)
    case .delete:
        return keys.isEmpty ? [:] : metadata.removing(keys)
    case .add, .remove:
        throw APIError.invalid(property, "'\(root)' takes 'set' and 'delete' operations, not '\(operation.operation.rawValue)'.")
    }
}
