import Crypto
import Foundation
import LayerModels
import LayerServer

/// The base of the URLs in pushed data. A change is rendered once for all the devices it goes
/// to, and a presence, typing or identity packet once for all its recipients, wherever they are
/// connected; yet each device reached the server under a base of its own (its connection's
/// `Host`, when `LAYER_PUBLIC_URL` is not set), and one client's `Host` must never shape what
/// another receives. So pushed data is rendered on a placeholder base, and each device's writer
/// puts its own base in the placeholder's place just before sending. Signed links stay valid: their
/// signature does not cover the base.
///
/// The placeholder derives from the internal token, so every replica knows it (ephemeral packets
/// cross replicas already rendered) and no client can know it to slip it into its own data.
struct PushURLTemplate: Sendable {
    let placeholder: String

    init(secret: String) {
        let digest = SHA256.hash(data: Data("layerline push url base\u{0}\(secret)".utf8))
        placeholder = "layer-push-base-" + digest.prefix(16).map { String(UInt16($0) | 0x100, radix: 16).dropFirst() }.joined()
    }

    /// What pushed data is rendered with.
    var urls: URLBuilder { URLBuilder(base: placeholder) }

    /// `json`, rendered with ``urls``, as the device whose base is `base` must receive it.
    /// `base` is the JSON-escaped text of that base (``escaped(_:)``), worked out once per device.
    func fill(_ json: String, base: String) -> String {
        json.replacingOccurrences(of: placeholder, with: base)
    }

    /// `base` as it is written inside a JSON string.
    static func escaped(_ base: String) -> String {
        let quoted = Packets.json(base)
        return String(quoted.dropFirst().dropLast())
    }
}
