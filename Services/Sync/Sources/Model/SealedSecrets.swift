import Crypto
import Foundation
import LayerServer

/// Seals the secrets the service must use itself and so cannot hash: the secrets apps sign their
/// webhooks with (each delivery needs an HMAC of its body) and the keys of the apps' push
/// providers (each push needs a JWT signed with one). AES-GCM with a key derived from the sync
/// service's own secret (`LAYER_CONTENT_LINK_SECRET`), one key per purpose, so that a copy of the
/// database alone gives none of them away.
struct SealedSecrets: Sendable {
    private let key: SymmetricKey

    private init(serviceSecret: String, salt: String, info: String) {
        key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(serviceSecret.utf8)), salt: Data(salt.utf8), info: Data(info.utf8),
            outputByteCount: 32)
    }

    /// For webhooks' secrets.
    static func webhooks(serviceSecret: String) -> SealedSecrets {
        SealedSecrets(serviceSecret: serviceSecret, salt: "layerline webhooks", info: "webhook secrets v1")
    }

    /// For push providers' private keys.
    static func pushKeys(serviceSecret: String) -> SealedSecrets {
        SealedSecrets(serviceSecret: serviceSecret, salt: "layerline push", info: "push provider keys v1")
    }

    func seal(_ secret: String) throws -> Data {
        try AES.GCM.seal(Data(secret.utf8), using: key).combined!
    }

    func open(_ sealed: Data) throws -> String {
        String(decoding: try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key), as: UTF8.self)
    }
}
