import Foundation

/// A user named in a request: an identity id (`layer:///identities/<user>`, URL-encoded) or a bare
/// user id, as every service of the suite reads one.
public enum IdentityReference {
    /// The user id `text` names; 422 naming `property` when it is no user id.
    public static func userID(_ text: String, property: String) throws -> String {
        var user = text
        let prefix = "layer:///identities/"
        if text.hasPrefix(prefix) {
            let encoded = String(text.dropFirst(prefix.count))
            user = encoded.removingPercentEncoding ?? encoded
        }
        guard (1...128).contains(user.count), !user.contains("\u{0}") else {
            throw APIError.invalid(property, "A user id has 1 to 128 characters and no NUL.")
        }
        return user
    }
}
