import Foundation

/// The `layer:///<collection>/<id>` identifiers of the public API.
///
/// Path parameters and body fields accept either the full URI or the bare UUID; app ids may also
/// carry the original product's `production`/`staging` environment segment.
public struct LayerID: Hashable, Sendable, CustomStringConvertible {
    public enum Collection: String, Sendable, CaseIterable {
        case apps, providers, keys, conversations, messages, content, announcements
        case identities, persons, calls, tokens, certificates
        case addressBooks = "address-books"
        case contacts, matches, exports, channels, entries
    }

    public let collection: Collection
    public let uuid: UUID

    public init(_ collection: Collection, _ uuid: UUID) {
        self.collection = collection
        self.uuid = uuid
    }

    /// Parses `layer:///<collection>/<uuid>` or a bare UUID into an id of `collection`.
    public init?(parsing text: String, as collection: Collection) {
        let prefix = "layer:///\(collection.rawValue)/"
        var rest = Substring(text)
        if rest.hasPrefix(prefix) {
            rest = rest.dropFirst(prefix.count)
            if collection == .apps {
                for environment in ["production/", "staging/"] where rest.hasPrefix(environment) {
                    rest = rest.dropFirst(environment.count)
                }
            }
        }
        guard let uuid = UUID(uuidString: String(rest)) else { return nil }
        self.init(collection, uuid)
    }

    /// The canonical URI form, with a lower-case UUID.
    public var uri: String { "layer:///\(collection.rawValue)/\(uuid.uuidString.lowercased())" }
    public var description: String { uri }

    /// The identity id of an app user: `layer:///identities/<url-encoded user id>`.
    public static func identity(userID: String) -> String {
        "layer:///identities/" + userID.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
    }
}

extension CharacterSet {
    /// RFC 3986 unreserved characters: what `encodeURIComponent` leaves alone, minus `!'()*`.
    public static let layerUnreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

extension UUID {
    /// The lower-case text form used in every id this suite emits.
    public var lowercased: String { uuidString.lowercased() }
}
