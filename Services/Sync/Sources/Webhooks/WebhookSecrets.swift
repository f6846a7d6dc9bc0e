import Crypto
import Foundation
import LayerServer

/// Seals the secrets apps sign their webhooks with, since each delivery needs the secret itself
/// (an HMAC of the body): AES-GCM with a key derived from the sync service's own secret
/// (`LAYER_CONTENT_LINK_SECRET`), so a copy of the database alone does not give them away.
struct WebhookSecrets: Sendable {
    private let key: SymmetricKey

    init(serviceSecret: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(serviceSecret.utf8)), salt: Data("layerline webhooks".utf8),
            info: Data("webhook secrets v1".utf8), outputByteCount: 32)
    }

    func seal(_ secret: String) throws -> Data {
        try AES.GCM.seal(Data(secret.utf8), using: key).combined!
    }

    func open(_ sealed: Data) throws -> String {
        String(decoding: try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key), as: UTF8.self)
    }
}
