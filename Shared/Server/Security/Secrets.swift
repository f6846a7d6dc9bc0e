import Crypto
import Foundation

/// Random tokens and how they are kept: tokens carry at least 256 random bits, so a SHA-256 hash
/// is what the database stores and a stolen table reveals none of them.
public enum Secrets {
    /// `bytes` random bytes, base64url-encoded (URL-safe, no padding).
    public static func randomToken(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let raw = (0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(raw).base64URLEncodedString()
    }

    public static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(token.utf8)))
    }

    /// Compares two secrets in time that depends only on their lengths.
    public static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(SHA256.hash(data: Data(lhs.utf8)))
        let right = Array(SHA256.hash(data: Data(rhs.utf8)))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
