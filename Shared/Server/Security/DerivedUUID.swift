import Crypto
import Foundation

extension UUID {
    /// A UUID that is a function of `key`: the first 16 bytes of its SHA-256, marked as version 8
    /// (custom) of the RFC 9562 variant. The same key gives the same id wherever and whenever it is
    /// computed, so a repeat of a request finds what the first one made.
    public init(derivedFrom key: String) {
        let digest = Array(SHA256.hash(data: Data(key.utf8)))
        var uuid = UUID().uuid
        withUnsafeMutableBytes(of: &uuid) { raw in
            for offset in raw.indices { raw[offset] = digest[offset] }
        }
        uuid.6 = (uuid.6 & 0x0f) | 0x80
        uuid.8 = (uuid.8 & 0x3f) | 0x80
        self.init(uuid: uuid)
    }
}
