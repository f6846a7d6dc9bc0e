import Foundation
import LayerServer

/// What `layer dev` keeps in its data directory: `secrets.json` (generated once; the CA key
/// secret must not change, or the stored CA cannot be opened) and `dev.json` (what a person or
/// a script needs to try the running suite).
struct DevSecrets: Codable {
    var operatorToken: String
    var internalToken: String
    var caKeySecret: String

    enum CodingKeys: String, CodingKey {
        case operatorToken = "operator_token"
        case internalToken = "internal_token"
        case caKeySecret = "ca_key_secret"
    }

    static func loadOrCreate(in directory: URL) throws -> DevSecrets {
        let url = directory.appendingPathComponent("secrets.json")
        if let data = try? Data(contentsOf: url) {
            return try JSONDecoder().decode(DevSecrets.self, from: data)
        }
        let secrets = DevSecrets(
            operatorToken: Secrets.randomToken(), internalToken: Secrets.randomToken(), caKeySecret: Secrets.randomToken())
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

    enum CodingKeys: String, CodingKey {
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
