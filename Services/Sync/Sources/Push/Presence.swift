import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Presence (reference 4.8): the status a user chose while at least one of their WebSockets is
/// connected, `offline` otherwise; `invisible` looks `offline` to everyone but its owner. Every
/// change is pushed, as an Identity `update`, to the devices of everyone who shares a
/// conversation with the user.
struct Presence: Sendable {
    /// What a client may choose; `auto` restores the last choice.
    static let choices: Set<String> = ["available", "busy", "away", "invisible", "auto"]

    let repositories: SyncRepositories
    let postgres: PostgresClient
    /// What the changes pushed to others are rendered with: the push template, which each
    /// receiving device fills with its own base (never the base of the device that changed).
    let urls: URLBuilder

    /// The first WebSocket of the user came: they are back with their last choice.
    func connected(app: UUID, user: String, logger: Logger) async throws {
        let (status, seen) = try await repositories.devices.choosePresence(app: app, user: user, status: nil, logger: logger)
        try await publish(app: app, user: user, status: status, seen: seen, logger: logger)
    }

    /// The last WebSocket of the user left.
    func disconnected(app: UUID, user: String, logger: Logger) async throws {
        let seen = try await repositories.devices.chosenPresence(app: app, users: [user], logger: logger)[user]?.seen ?? Date()
        try await publish(app: app, user: user, status: "offline", seen: seen, logger: logger)
    }

    func choose(_ status: String, app: UUID, user: String, logger: Logger) async throws {
        let chosen = try await repositories.devices.choosePresence(
            app: app, user: user, status: status == "auto" ? nil : status, logger: logger)
        try await publish(app: app, user: user, status: chosen.status, seen: chosen.seen, logger: logger)
    }

    private func publish(app: UUID, user: String, status: String, seen: Date, logger: Logger) async throws {
        let others = try await repositories.devices.contacts(app: app, user: user, logger: logger).filter { $0 != user }
        let visible = status == "invisible" ? "offline" : status
        let own = Self.change(user: user, status: status, seen: seen, urls: urls)
        _ = try await PushChannel.publish(own, app: app, users: [user], postgres: postgres, logger: logger)
        if !others.isEmpty {
            let seenByOthers = Self.change(user: user, status: visible, seen: seen, urls: urls)
            _ = try await PushChannel.publish(seenByOthers, app: app, users: others, postgres: postgres, logger: logger)
        }
    }

    /// The presence of these users as `viewer` sees it, as Identity `update` change bodies.
    func changes(app: UUID, users: [String], viewer: String, urls: URLBuilder, logger: Logger) async throws -> [JSONValue] {
        guard !users.isEmpty else { return [] }
        let chosen = try await repositories.devices.chosenPresence(app: app, users: users, logger: logger)
        let online = try await repositories.devices.liveDevices(app: app, users: users, kind: .webSocket, logger: logger)
        var result: [JSONValue] = []
        for user in users {
            var status = online[user] != nil ? (chosen[user]?.status ?? "available") : "offline"
            if status == "invisible", user != viewer { status = "offline" }
            let body = Self.change(user: user, status: status, seen: chosen[user]?.seen, urls: urls).body
            result.append(JSONValue(jsonText: body) ?? .null)
        }
        return result
    }

    static func change(user: String, status: String, seen: Date?, urls: URLBuilder) -> EphemeralPacket {
        let identity = Packets.ObjectReference(
            type: "Identity", id: LayerID.identity(userID: user), url: urls.identity(user))
        let patch: [Packets.PatchOperation] = [
            .set("presence.status", .string(status)),
            .set("presence.last_seen_at", seen.map { .string(LayerTimestamp.string($0)) } ?? .null),
        ]
        let (type, body) = Packets.change("update", identity, patch)
        return EphemeralPacket(type: type, body: body, event: "presence")
    }
}
