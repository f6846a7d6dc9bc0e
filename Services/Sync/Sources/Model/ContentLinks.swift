import Crypto
import Foundation
import LayerModels
import LayerServer

/// Signed, expiring URLs for uploading and downloading rich content. Whoever holds one may use it
/// until it expires, without a session, as with the signed storage URLs of the original product;
/// any replica can check it, since the key derives from the shared internal token.
struct ContentLinks: Sendable {
    let key: SymmetricKey
    let lifetime: TimeInterval

    init(secret: String, lifetime: TimeInterval = 3600) {
        key = SymmetricKey(data: SHA256.hash(data: Data("layerline content links\u{0}\(secret)".utf8)))
        self.lifetime = lifetime
    }

    enum Purpose: String { case upload, download }

    func url(_ purpose: Purpose, content: UUID, urls: URLBuilder, now: Date = Date()) -> (url: String, expiration: Date) {
        let expires = Int64(now.timeIntervalSince1970 + lifetime)
        let signature = sign(purpose, content: content, expires: expires)
        return (
            "\(urls.content(content))/\(purpose.rawValue)?expires=\(expires)&signature=\(signature)",
            Date(timeIntervalSince1970: TimeInterval(expires))
        )
    }

    /// Whether a presented `expires` and `signature` are a valid, unexpired link for `content`.
    func verify(_ purpose: Purpose, content: UUID, expires: String?, signature: String?, now: Date = Date()) -> Bool {
        guard let expires, let seconds = Int64(expires), let signature,
            TimeInterval(seconds) > now.timeIntervalSince1970
        else { return false }
        return Secrets.constantTimeEquals(sign(purpose, content: content, expires: seconds), signature)
    }

    private func sign(_ purpose: Purpose, content: UUID, expires: Int64) -> String {
        let message = Data("\(purpose.rawValue):\(content.lowercased):\(expires)".utf8)
        return Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64URLEncodedString()
    }
}
