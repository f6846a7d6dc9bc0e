import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Presence (reference 4.8): the status a user chose while at least one of their WebSockets is
/// connected, `offline` otherwise; `invisible` looks `offline` to everyone but its owner. Every
/// change is pushed, as an Identity `update`, to the devices of everyone who shares a
/// conversation with the user. Two users in a block (either way) see each other always offline.
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
        var others = try await repositories.devices.contacts(app: app, user: user, logger: logger).filter { $0 != user }
        let hidden = try await repositories.blocks.blockedEitherWay(app: app, user: user, among: others, logger: logger)
        others.removeAll(where: hidden.contains)
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
        try await packets(app: app, users: users, viewer: viewer, urls: urls, logger: logger).map {
            JSONValue(jsonText: $0.body) ?? .null
        }
    }

    /// The presence of these users as `viewer` sees it, as Identity `update` packets.
    func packets(app: UUID, users: [String], viewer: String, urls: URLBuilder, logger: Logger) async throws -> [EphemeralPacket] {
        guard !users.isEmpty else { return [] }
        let chosen = try await repositories.devices.chosenPresence(app: app, users: users, logger: logger)
        let online = try await repositories.devices.liveDevices(app: app, users: users, kind: .webSocket, logger: logger)
        let hidden = try await repositories.blocks.blockedEitherWay(app: app, user: viewer, among: users, logger: logger)
        return users.map { user in
            var status = online[user] != nil ? (chosen[user]?.status ?? "available") : "offline"
            var seen = chosen[user]?.seen
            if status == "invisible", user != viewer { status = "offline" }
            if hidden.contains(user) { (status, seen) = ("offline", nil) }
            return Self.change(user: user, status: status, seen: seen, urls: urls)
        }
    }

    /// After a block is made or lifted, shows each of the two the other's presence as they may
    /// see it now: offline while the block lasts, the real one again after it.
    func blockChanged(app: UUID, between owner: String, and blocked: String, urls: URLBuilder, logger: Logger) async throws {
        for (user, viewer) in [(owner, blocked), (blocked, owner)] {
            for packet in try await packets(app: app, users: [user], viewer: viewer, urls: urls, logger: logger) {
                _ = try await PushChannel.publish(packet, app: app, users: [viewer], postgres: postgres, logger: logger)
            }
        }
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
