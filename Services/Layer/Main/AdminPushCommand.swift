import ArgumentParser
import Foundation
import LayerModels
import LayerServer

extension AdminCommand {
    /// `layer admin push …`: an app's APNs and FCM credentials, through the operator API
    /// (`/admin/apps/<app>/push…`). Keys are read from files and never printed.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set, show and remove an app's push providers (APNs, FCM).",
            subcommands: [Show.self, SetAPNs.self, SetFCM.self, Remove.self])

        static func path(_ app: String, _ provider: String? = nil) -> String {
            "/admin/apps/\(OperatorClient.segment(app))/push" + (provider.map { "/\($0)" } ?? "")
        }

        /// One line of a provider: what it is, whether it works, and since when it fails.
        static func line(_ provider: String, _ shown: JSONValue?) -> String {
            guard let shown, shown != .null else { return "\(provider)  not set" }
            var parts = [provider, shown["status"]?.stringValue ?? "?"]
            if let reason = shown["status_reason"]?.stringValue { parts[1] += " (\(reason))" }
            for key in ["team_id", "key_id", "topic", "environment", "project_id", "client_email", "updated_at"] {
                if let value = shown[key]?.stringValue { parts.append("\(key)=\(value)") }
            }
            return parts.joined(separator: "  ")
        }

        static func read(_ file: String, what: String) throws -> String {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw ValidationError("Cannot read \(what) from \(file).")
            }
            return text
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show an app's push providers and whether they work.")
            @OptionGroup var connection: Connection
            @Option(help: "The app id.") var app: String

            func run() async throws {
                let shown = try await connection.client().call(.GET, Push.path(app))
                for provider in ["apns", "fcm"] { print(Push.line(provider, shown?[provider])) }
            }
        }

        struct SetAPNs: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set-apns",
                abstract: "Set an app's APNs credentials: the .p8 key, its key id, the team and the topic.")
            @OptionGroup var connection: Connection
            @Option(help: "The app id.") var app: String
            @Option(help: "The .p8 file Apple gave for the key.") var keyFile: String
            @Option(help: "The key's id (10 characters).") var keyId: String
            @Option(help: "The team's id (10 characters).") var teamId: String
            @Option(help: "The app's bundle id (apns-topic) for tokens that do not name one.") var topic: String
            @Flag(help: "Send through APNs' sandbox (development builds).") var sandbox = false

            func run() async throws {
                let body: JSONValue = [
                    "team_id": .string(teamId), "key_id": .string(keyId), "topic": .string(topic),
                    "private_key": .string(try Push.read(keyFile, what: "the .p8 key")),
                    "environment": sandbox ? "sandbox" : "production",
                ]
                print(Push.line("apns", try await connection.client().call(.PUT, Push.path(app, "apns"), body: body)))
            }
        }

        struct SetFCM: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set-fcm", abstract: "Set an app's FCM credentials: a service account's JSON key file.")
            @OptionGroup var connection: Connection
            @Option(help: "The app id.") var app: String
            @Option(help: "The service account's key file (JSON), as the Firebase console gives it.")
            var serviceAccount: String

            func run() async throws {
                let text = try Push.read(serviceAccount, what: "the service account")
                guard let account = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
                    throw ValidationError("\(serviceAccount) is not JSON.")
                }
                let answer = try await connection.client().call(.PUT, Push.path(app, "fcm"), body: ["service_account": account])
                print(Push.line("fcm", answer))
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove an app's APNs or FCM credentials.")
            @OptionGroup var connection: Connection
            @Option(help: "The app id.") var app: String
            @Argument(help: "apns or fcm.") var provider: String

            func run() async throws {
                guard ["apns", "fcm"].contains(provider) else { throw ValidationError("The provider is apns or fcm.") }
                _ = try await connection.client().call(.DELETE, Push.path(app, provider))
                print("removed \(provider) of \(app)")
            }
        }
    }
}
