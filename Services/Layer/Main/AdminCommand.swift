import ArgumentParser
import Foundation
import LayerModels
import LayerServer

/// `layer admin …`: the operator API from the command line.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Manage apps, provider keys, Server API tokens, certificates, webhooks and push providers.",
        subcommands: [
            CreateApp.self, AllowOrigins.self, AddKey.self, DisableKey.self, EnableKey.self, DeleteKey.self,
            CreateToken.self, RevokeToken.self, RevokeCertificate.self, Webhooks.self, Push.self,
        ])

    /// Where the suite is and the operator token: flags, then `LAYER_URL`/`LAYER_OPERATOR_TOKEN`
    /// (or `LAYER_OPERATOR_TOKEN_FILE`), then the `dev.json` of a local `layer dev`, then the auth
    /// service of this host (`http://127.0.0.1:$LAYER_PORT`, 8081 by default): inside the auth
    /// service's container, `layer admin …` needs no flags.
    struct Connection: ParsableArguments {
        @Option(help: "Base URL of the suite (default: LAYER_URL, the running `layer dev`, or the auth service on this host).")
        var url: String?
        @Option(help: "The operator token (default: LAYER_OPERATOR_TOKEN, or the running `layer dev`'s).")
        var operatorToken: String?
        @Option(help: "The data directory of `layer dev`, to read dev.json from.")
        var dataDir: String = ".layer"

        func client() throws -> OperatorClient {
            let environment = SettingsReader()
            try environment.validate("layer admin")
            let dev = DevInfo.load(from: URL(fileURLWithPath: dataDir))
            let local = "http://127.0.0.1:\(environment.optional("LAYER_PORT") ?? "8081")"
            let url = url ?? environment.optional("LAYER_URL") ?? dev?.baseURL ?? local
            guard let token = operatorToken ?? environment.optional("LAYER_OPERATOR_TOKEN") ?? dev?.operatorToken else {
                throw ValidationError("No operator token: pass --operator-token or set LAYER_OPERATOR_TOKEN.")
            }
            return OperatorClient(baseURL: url, token: token)
        }
    }

    struct CreateApp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app and print its id.")
        @OptionGroup var connection: Connection
        @Option(help: "The app's name.") var name: String
        @Option(
            name: .customLong("allowed-origin"), help: "A web origin browsers may call the suite from for this app (repeat it).")
        var allowedOrigins: [String] = []

        func run() async throws {
            print(try await connection.client().createApp(name: name, allowedOrigins: allowedOrigins))
        }
    }

    struct AllowOrigins: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set the web origins browsers may call the suite from for an app (CORS); none clears them.",
            discussion: "Each is https://app.example.com, http://localhost:* (any port), https://*.example.com or *.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(name: .customLong("origin"), help: "An allowed origin (repeat it for several).") var origins: [String] = []

        func run() async throws {
            let client = try connection.client()
            let answer = try await client.call(
                .PATCH, "/admin/apps/\(OperatorClient.segment(app))",
                body: ["allowed_origins": .array(origins.map(JSONValue.string))])
            var allowed: [String] = []
            if case .array(let values)? = answer?["allowed_origins"] { allowed = values.compactMap(\.stringValue) }
            print(allowed.isEmpty ? "no origins allowed for \(app)" : allowed.joined(separator: "\n"))
        }
    }

    struct AddKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a provider's RSA public key; prints the kid and iss to put in identity tokens.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "An existing provider of the app (default: a new provider).") var provider: String?
        @Option(help: "A PEM file with the RSA public key (or a private key, whose public half is used).")
        var publicKey: String

        func run() async throws {
            let client = try connection.client()
            let pem = try KeyFiles.publicKeyPEM(fromFile: publicKey)
            var provider = self.provider
            if provider == nil { provider = try await client.createProvider(app: app) }
            let providerID = provider!
            let key = try await client.registerKey(app: app, provider: providerID, publicKeyPEM: pem)
            print("kid: \(key)")
            print("iss: \(providerID)")
        }
    }

    struct KeyOptions: ParsableArguments {
        @Option(help: "The app id.") var app: String
        @Option(help: "The provider id (iss).") var provider: String
        @Option(help: "The key id (kid).") var key: String

        func setEnabled(_ enabled: Bool, with client: OperatorClient) async throws {
            _ = try await client.call(
                .PATCH, client.keyPath(app: app, provider: provider, key: key), body: ["enabled": .bool(enabled)])
            print("\(enabled ? "enabled" : "disabled") \(key)")
        }
    }

    struct DisableKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a key: tokens it signs are refused.")
        @OptionGroup var connection: Connection
        @OptionGroup var key: KeyOptions

        func run() async throws {
            try await key.setEnabled(false, with: connection.client())
        }
    }

    struct EnableKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled key again.")
        @OptionGroup var connection: Connection
        @OptionGroup var key: KeyOptions

        func run() async throws {
            try await key.setEnabled(true, with: connection.client())
        }
    }

    struct DeleteKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a key for good.")
        @OptionGroup var connection: Connection
        @OptionGroup var key: KeyOptions

        func run() async throws {
            let client = try connection.client()
            _ = try await client.call(.DELETE, client.keyPath(app: key.app, provider: key.provider, key: key.key))
            print("deleted \(key.key)")
        }
    }

    struct CreateToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mint a Server API token for an app; prints its id and the token (shown only once).")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String

        func run() async throws {
            let client = try connection.client()
            let answer = try await client.call(.POST, "/admin/apps/\(OperatorClient.segment(app))/tokens")
            print("id: \(try client.string(answer, "id"))")
            print("token: \(try client.string(answer, "token"))")
        }
    }

    struct RevokeToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a Server API token.")
        @OptionGroup var connection: Connection
        @Option(help: "The app id.") var app: String
        @Option(help: "The token's id (not the token).") var token: String

        func run() async throws {
            let client = try connection.client()
            _ = try await client.call(
                .DELETE, "/admin/apps/\(OperatorClient.segment(app))/tokens/\(OperatorClient.segment(token))")
            print("revoked \(token)")
        }
    }

    struct RevokeCertificate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a device certificate and end its sessions.")
        @OptionGroup var connection: Connection
        @Option(help: "The certificate id.") var certificate: String

        func run() async throws {
            let client = try connection.client()
            _ = try await client.call(.DELETE, "/admin/certificates/\(OperatorClient.segment(certificate))")
            print("revoked \(certificate)")
        }
    }
}
