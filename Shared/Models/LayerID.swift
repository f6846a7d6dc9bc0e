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
    public var uri: String { "layer:///\(collection.rawValue)/\(uuid.lowercased)" }
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
    /// The lower-case text form used in every id this suite emits. Written by hand:
    /// `uuidString` formats through `snprintf` and then has to be lower-cased, which took a
    /// twentieth of the server's time in a first sync that writes thousands of ids.
    public var lowercased: String {
        withUnsafeBytes(of: uuid) { source in
            String(unsafeUninitializedCapacity: 36) { target in
                var index = 0
                for (offset, byte) in source.enumerated() {
                    if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                        target[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    target[index] = hexDigit(byte >> 4)
                    target[index + 1] = hexDigit(byte & 0x0F)
                    index += 2
                }
                return index
            }
        }
    }
}

extension UUID {
    /// Reads the 36-character text form in either case, without the `sscanf` of
    /// `UUID(uuidString:)`; nil for anything else.
    public init?(text: some StringProtocol) {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = text.utf8.withContiguousStorageIfAvailable { utf8 in
            withUnsafeMutableBytes(of: &bytes) { target -> Bool in
                guard utf8.count == 36 else { return false }
                var index = 0
                for offset in 0..<16 {
                    if offset == 4 || offset == 6 || offset == 8 || offset == 10 {
                        guard utf8[index] == UInt8(ascii: "-") else { return false }
                        index += 1
                    }
                    guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return false }
                    target[offset] = high << 4 | low
                    index += 2
                }
                return true
            }
        }
        switch parsed {
        case true?: self.init(uuid: bytes)
        case false?: return nil
        case nil:
            guard let uuid = UUID(uuidString: String(text)) else { return nil }
            self = uuid
        }
    }
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
}

private func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
}
