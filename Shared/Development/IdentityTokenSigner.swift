import Foundation
import LayerModels
import LayerServer
import _CryptoExtras

/// Signs identity tokens as an app's backend would: what `layer token` and the tests use. The
/// server never signs identity tokens; it only verifies them.
public struct IdentityTokenSigner: Sendable {
    public let privateKey: _RSA.Signing.PrivateKey
    /// `layer:///keys/<uuid>`, the JWT `kid`.
    public let keyID: String
    /// `layer:///providers/<uuid>`, the JWT `iss`.
    public let providerID: String

    public init(privateKey: _RSA.Signing.PrivateKey, keyID: String, providerID: String) {
        self.privateKey = privateKey
        self.keyID = keyID
        self.providerID = providerID
    }

    public init(privateKeyPEM: String, keyID: String, providerID: String) throws {
        self.init(privateKey: try _RSA.Signing.PrivateKey(pemRepresentation: privateKeyPEM), keyID: keyID, providerID: providerID)
    }

    /// The standard header and claims for `userID` with `nonce`, valid for `lifetime` seconds.
    public func token(
        userID: String, nonce: String, issuedAt: Date = Date(), lifetime: TimeInterval = 300,
        extraClaims: [String: JSONValue] = [:]
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(providerID), "prn": .string(userID), "nce": .string(nonce),
            "iat": .number(issuedAt.timeIntervalSince1970.rounded(.down)),
            "exp": .number((issuedAt.timeIntervalSince1970 + lifetime).rounded(.down)),
        ]
        claims.merge(extraClaims) { _, new in new }
        return try Self.sign(header: standardHeader, claims: claims, with: privateKey)
    }

    public var standardHeader: [String: JSONValue] {
        ["typ": "JWT", "alg": "RS256", "cty": "layer-eit;v=1", "kid": .string(keyID)]
    }

    /// A compact JWS of any header and claims, signed RS256 with `key`.
    public static func sign(
        header: [String: JSONValue], claims: [String: JSONValue], with key: _RSA.Signing.PrivateKey
    ) throws -> String {
        let input = "\(try encode(header)).\(try encode(claims))"
        let signature = try key.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return "\(input).\(signature.rawRepresentation.base64URLEncodedString())"
    }

    public static func encode(_ value: [String: JSONValue]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value).base64URLEncodedString()
    }
}
