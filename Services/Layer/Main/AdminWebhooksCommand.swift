import ArgumentParser
import Foundation
import LayerModels
import LayerServer

extension AdminCommand {
    /// `layer admin webhooks …`: an app's webhooks as the operator sees them, through the app's
    /// webhooks API with a Server API token minted for the command and revoked after it.
    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List an app's webhooks; pause, resume and replay their deliveries.",
            subcommands: [List.self, Pause.self, Resume.self, Replay.self])

        struct Target: ParsableArguments {
            @Option(help: "The app id.") var app: String
            @Option(help: "The webhook id (its UUID or layer:///apps/<app>/webhooks/<uuid>).") var webhook: String

            var path: String {
                "/apps/\(OperatorClient.segment(app))/webhooks/\(OperatorClient.segment(webhook))"
            }

            /// `POST …/webhooks/<id>/<action>` with a Server API token minted for it; the answer.
            func post(_ action: String, body: JSONValue? = nil, through connection: Connection) async throws -> JSONValue? {
                let client = try connection.client()
                return try await client.withServerAPIToken(app: app) { token in
                    try await client.call(.POST, "\(path)/\(action)", body: body, bearer: token, accept: Webhooks.accept)
                }
            }
        }

        static let accept = "\(APIVersion.webhooksMediaType); version=3.0"

        /// One line of a webhook: id, status (and why), version, target, events.
        static func line(_ webhook: JSONValue) -> String {
            var status = webhook["status"]?.stringValue ?? "?"
            if let reason = webhook["status_reason"]?.stringValue { status += " (\(reason))" }
            var events: [String] = []
            if case .array(let values)? = webhook["events"] { events = values.compactMap(\.stringValue) }
            return [
                webhook["id"]?.stringValue ?? "?", status, webhook["version"]?.stringValue ?? "?",
                webhook["target_url"]?.stringValue ?? "?", events.joined(separator: ","),
            ].joined(separator: "  ")
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "List an app's webhooks, one a line.")
            @OptionGroup var connection: Connection
            @Option(help: "The app id.") var app: String

            func run() async throws {
                let client = try connection.client()
                let listed = try await client.withServerAPIToken(app: app) { token in
                    try await client.call(
                        .GET, "/apps/\(OperatorClient.segment(app))/webhooks", bearer: token, accept: Webhooks.accept)
                }
                guard case .array(let webhooks)? = listed, !webhooks.isEmpty else {
                    print("no webhooks for \(app)")
                    return
                }
                for webhook in webhooks { print(Webhooks.line(webhook)) }
            }
        }

        struct Pause: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Stop deliveries to an active webhook; its events are kept and delivered on resume.")
            @OptionGroup var connection: Connection
            @OptionGroup var target: Target

            func run() async throws {
                print(Webhooks.line(try await target.post("pause", through: connection) ?? .null))
            }
        }

        struct Resume: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Deliver to a paused webhook again, the events it missed first.")
            @OptionGroup var connection: Connection
            @OptionGroup var target: Target

            func run() async throws {
                print(Webhooks.line(try await target.post("resume", through: connection) ?? .null))
            }
        }

        struct Replay: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Deliver again the kept events a webhook was sent (since a time), in order, with their ids.")
            @OptionGroup var connection: Connection
            @OptionGroup var target: Target
            @Option(help: "Only events since this time (ISO-8601, e.g. 2026-11-27T09:00:00Z); default: all kept.")
            var since: String?

            func run() async throws {
                if let since, LayerTimestamp.date(since) == nil {
                    throw ValidationError("--since is an ISO-8601 time, e.g. 2026-11-27T09:00:00Z.")
                }
                let answer = try await target.post(
                    "replay", body: ["since": since.map(JSONValue.string) ?? .null], through: connection)
                var count = 0
                if case .number(let value)? = answer?["events"] { count = Int(value) }
                print("replaying \(count) events")
            }
        }
    }
}
