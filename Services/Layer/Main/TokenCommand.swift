import ArgumentParser
import Foundation
import LayerDevelopment
import LayerModels
import LayerServer
import _CryptoExtras

/// `layer token`: sign a test identity token as an app's backend would, so a person can try the
/// authentication flow with curl.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Sign an identity token for a user and a nonce with a local private key.",
        discussion: """
            With a running `layer dev`, only --user and --nonce are needed: the demo key, kid and iss \
            come from its dev.json. Get a nonce with: curl -X POST -H 'Accept: application/vnd.layer+json; version=3.0' <url>/nonces
            """)

    @Option(help: "The app's user id (the prn claim).") var user: String
    // Nonces are base64url and may begin with "-", so the value is taken whatever it looks like.
    @Option(parsing: .unconditional, help: "The nonce from POST /nonces or a 401 challenge.") var nonce: String
    @Option(help: "PEM file with the provider's RSA private key (default: the dev demo key).") var key: String?
    @Option(help: "The key id, layer:///keys/<uuid> (default: the dev demo key's).") var kid: String?
    @Option(help: "The provider id, layer:///providers/<uuid> (default: the dev demo provider).") var iss: String?
    @Option(help: "The display_name claim.") var displayName: String?
    @Option(help: "Seconds until the token expires.") var ttl: Int = 300
    @Option(help: "The data directory of `layer dev`, to read dev.json from.") var dataDir: String = ".layer"

    func run() async throws {
        let dev = DevInfo.load(from: URL(fileURLWithPath: dataDir))
        guard let keyPath = key ?? dev?.privateKeyPath, let kid = kid ?? dev?.keyID, let iss = iss ?? dev?.providerID else {
            throw ValidationError("Pass --key, --kid and --iss, or run `layer dev` first so its dev.json supplies them.")
        }
        let signer = try IdentityTokenSigner(
            privateKeyPEM: String(contentsOfFile: keyPath, encoding: .utf8), keyID: kid, providerID: iss)
        var claims: [String: JSONValue] = [:]
        if let displayName { claims["display_name"] = .string(displayName) }
        print(try signer.token(userID: user, nonce: nonce, lifetime: TimeInterval(ttl), extraClaims: claims))
    }
}

enum KeyFiles {
    /// The RSA public key in a PEM file that holds either a public or a private key.
    static func publicKeyPEM(fromFile path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        if let privateKey = try? _RSA.Signing.PrivateKey(pemRepresentation: text) {
            return privateKey.publicKey.pemRepresentation
        }
        return try _RSA.Signing.PublicKey(pemRepresentation: text).pemRepresentation
    }
}
