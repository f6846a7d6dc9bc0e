import Foundation
import LayerModels
import LayerServer

/// A webhook as an app registers it: `{"version", "target_url", "events", "secret", "config"}`
/// (`event_types` is taken for `events`), every field checked before anything is stored, each
/// refusal naming its field.
struct WebhookInput: Sendable {
    var version: String
    var targetURL: String
    var events: [String]
    var secret: String
    /// Free-form string values the app wants back in every delivery.
    var config: [String: String]?

    static let keys: Set<String> = ["version", "target_url", "events", "event_types", "secret", "config"]

    init(_ body: JSONValue, targets: WebhookTargets) throws {
        guard case .object(let fields) = body else { throw APIError.invalid("body", "The body is a JSON object.") }
        if let unknown = fields.keys.sorted().first(where: { !Self.keys.contains($0) }) {
            throw APIError.invalid(unknown, "'\(unknown)' is not a property of a webhook.")
        }
        version = try Self.string(fields["version"], "version")
        guard WebhookEvents.versions.contains(version) else {
            throw APIError.invalid("version", "version is one of \(WebhookEvents.versions.joined(separator: ", ")).")
        }
        targetURL = try targets.check(try Self.string(fields["target_url"], "target_url"))
        let eventsProperty = fields["events"] == nil && fields["event_types"] != nil ? "event_types" : "events"
        guard let listed = fields[eventsProperty] else {
            throw APIError(.missingProperty, "The events property cannot be omitted.", property: "events")
        }
        guard case .array(let items) = listed, !items.isEmpty, items.count <= 50 else {
            throw APIError.invalid(eventsProperty, "\(eventsProperty) lists 1 to 50 event types.")
        }
        let known = WebhookEvents.names(version: version)
        var events: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let name) = item, known.contains(name) else {
                throw APIError.invalid(
                    "\(eventsProperty).\(index)",
                    "Webhooks of version \(version) take the events \(known.joined(separator: ", ")).")
            }
            if !events.contains(name) { events.append(name) }
        }
        self.events = events
        secret = try Self.string(fields["secret"], "secret")
        guard (1...256).contains(secret.utf8.count) else {
            throw APIError.invalid("secret", "secret has 1 to 256 bytes.")
        }
        switch fields["config"] {
        case nil, .null?:
            config = nil
        case .object(let values)?:
            var config: [String: String] = [:]
            for (key, value) in values {
                guard case .string(let text) = value else {
                    throw APIError.invalid("config.\(key)", "The values of config are strings.")
                }
                config[key] = text
            }
            guard values.count <= 50, JSONValue.object(values).jsonText.utf8.count <= 8192 else {
                throw APIError.invalid("config", "config holds at most 50 values and 8 KiB.")
            }
            self.config = config
        default:
            throw APIError.invalid("config", "config is an object of string values.")
        }
    }

    private static func string(_ value: JSONValue?, _ property: String) throws -> String {
        switch value {
        case nil, .null?:
            throw APIError(.missingProperty, "The \(property) property cannot be omitted.", property: property)
        case .string(let text)?:
            return text
        default:
            throw APIError.invalid(property, "\(property) is a string.")
        }
    }
}
