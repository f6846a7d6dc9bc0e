import Foundation
import Hummingbird
import LayerModels

extension Parameters {
    /// A path parameter holding a Layer id, as the bare UUID or the (URL-encoded) full URI.
    public func layerID(_ name: String, as collection: LayerID.Collection) throws -> LayerID {
        let raw = self.get(name) ?? ""
        let text = raw.removingPercentEncoding ?? raw
        guard let id = LayerID(parsing: text, as: collection) else {
            throw APIError(.notFound, "'\(text)' is not a \(collection.rawValue) id.")
        }
        return id
    }

    /// A percent-decoded path parameter, such as an app's user id.
    public func decoded(_ name: String) -> String {
        let raw = self.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }
}

extension Parameters {
    /// An app's user id from the path. One that no user can have (empty, over 128 characters, or
    /// with a NUL) is simply not found.
    public func appUserID(_ name: String) throws -> String {
        let userID = decoded(name)
        guard (1...128).contains(userID.count), !userID.contains("\u{0}") else {
            throw APIError.notFound("The user '\(userID.replacingOccurrences(of: "\u{0}", with: "\\0"))'")
        }
        return userID
    }
}

/// The checks every free-text name of the API takes: 1 to `maxLength` characters, no NUL.
public func validateName(_ text: String, property: String, maxLength: Int = 128) throws -> String {
    let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard (1...maxLength).contains(name.count), !name.contains("\u{0}") else {
        throw APIError.invalid(property, "The \(property) must have 1 to \(maxLength) characters and no NUL.")
    }
    return name
}
