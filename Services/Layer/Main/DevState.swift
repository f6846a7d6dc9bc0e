import Foundation
import LayerModels
import LayerServer

/// What `layer dev` keeps in its data directory: `secrets.json` (generated once; the CA key
/// secret must not change, or the stored CA cannot be opened) and `dev.json` (what a person or
/// a script needs to try the running suite).
struct DevSecrets: Codable {
    var operatorToken: String
    var caKeySecret: String
    /// Shared with the TURN server (coturn's `static-auth-secret`) that `layer dev` runs.
    var turnSecret: String?
    /// Each service's internal token, by service.
    var internalTokens: [String: String]?
    /// The key of the sync service's signed content links.
    var contentLinkSecret: String?

    enum CodingKeys: String, CodingKey {
        case operatorToken = "operator_token"
        case caKeySecret = "ca_key_secret"
        case turnSecret = "turn_secret"
        case internalTokens = "internal_tokens"
        case contentLinkSecret = "content_link_secret"
    }

    /// Reads `secrets.json`, or makes it; a secret that an earlier version did not keep (it had
    /// one internal token for every service and for content links) is made and added.
    static func loadOrCreate(in directory: URL) throws -> DevSecrets {
        let url = directory.appendingPathComponent("secrets.json")
        var secrets: DevSecrets
        if let data = try? Data(contentsOf: url) {
            secrets = try JSONDecoder().decode(DevSecrets.self, from: data)
        } else {
            secrets = DevSecrets(operatorToken: Secrets.randomToken(), caKeySecret: Secrets.randomToken())
        }
        var changed = false
        func fill(_ value: inout String?) {
            guard value == nil else { return }
            value = Secrets.randomToken()
            changed = true
        }
        fill(&secrets.turnSecret)
        fill(&secrets.contentLinkSecret)
        var tokens = secrets.internalTokens ?? [:]
        for service in InternalAPI.Service.all {
            var token = tokens[service]
            fill(&token)
            tokens[service] = token
        }
        secrets.internalTokens = tokens
        if changed { try Secrets.writePrivately(try JSONEncoder().encode(secrets), to: url) }
        return secrets
    }
}

struct DevInfo: Codable {
    var baseURL: String
    var operatorToken: String
    /// For scripts that call the internal API (`/internal/v1/introspect`) of the local suite: each
    /// service's token, by service (nil in the dev.json of earlier versions).
    var internalTokens: [String: String]?
    var appID: String
    var providerID: String
    var keyID: String
    var privateKeyPath: String
    /// The UDP port of the STUN server, the secret of the TURN server (`use-auth-secret`) and its
    /// URIs, when `layer dev` runs one.
    var stunPort: Int?
    var turnSecret: String?
    var turnURIs: [String]?

    enum CodingKeys: String, CodingKey {
        case stunPort = "stun_port"
        case turnSecret = "turn_secret"
        case turnURIs = "turn_uris"
        case baseURL = "base_url"
        case operatorToken = "operator_token"
        case internalTokens = "internal_tokens"
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
