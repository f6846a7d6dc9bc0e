import Foundation
import LayerServer

/// What `layer dev` keeps in its data directory: `secrets.json` (generated once; the CA key
/// secret must not change, or the stored CA cannot be opened) and `dev.json` (what a person or
/// a script needs to try the running suite).
struct DevSecrets: Codable {
    var operatorToken: String
    var internalToken: String
    var caKeySecret: String
    /// Shared with a TURN server (coturn's `static-auth-secret`) that the developer runs beside;
    /// absent from the secrets of earlier versions, and added on their next start.
    var turnSecret: String?

    enum CodingKeys: String, CodingKey {
        case operatorToken = "operator_token"
        case internalToken = "internal_token"
        case caKeySecret = "ca_key_secret"
        case turnSecret = "turn_secret"
    }

    static func loadOrCreate(in directory: URL) throws -> DevSecrets {
        let url = directory.appendingPathComponent("secrets.json")
        var secrets: DevSecrets
        if let data = try? Data(contentsOf: url) {
            secrets = try JSONDecoder().decode(DevSecrets.self, from: data)
            guard secrets.turnSecret == nil else { return secrets }
        } else {
            secrets = DevSecrets(
                operatorToken: Secrets.randomToken(), internalToken: Secrets.randomToken(), caKeySecret: Secrets.randomToken())
        }
        secrets.turnSecret = Secrets.randomToken()
        try Secrets.writePrivately(try JSONEncoder().encode(secrets), to: url)
        return secrets
    }
}

struct DevInfo: Codable {
    var baseURL: String
    var operatorToken: String
    /// For scripts that call the internal API (`/internal/v1/introspect`) of the local suite.
    var internalToken: String
    var appID: String
    var providerID: String
    var keyID: String
    var privateKeyPath: String
    /// The UDP port of the STUN server, and the secret to give a TURN server (`use-auth-secret`).
    var stunPort: Int?
    var turnSecret: String?

    enum CodingKeys: String, CodingKey {
        case stunPort = "stun_port"
        case turnSecret = "turn_secret"
        case baseURL = "base_url"
        case operatorToken = "operator_token"
        case internalToken = "internal_token"
        case appID = "app_id"
        case providerID = "provider_id"
        case keyID = "key_id"
        case privateKeyPath = "private_key_path"
    }

    static func load(from directory: URL) -> DevInfo? {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("dev.json")) else { return nil }
        return try? JSONDecoder().decode(DevInfo.self, from: data)
    }

    func save(in directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try Secrets.writePrivately(try encoder.encode(self), to: directory.appendingPathComponent("dev.json"))
    }
}
