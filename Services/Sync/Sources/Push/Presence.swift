import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Presence (reference 4.8): the status a user chose while at least one of their WebSockets is
/// connected, `offline` otherwise; `invisible` looks `offline` to everyone but its owner. Every
/// change is pushed, as an Identity `update`, to the devices of the user and of everyone who
/// follows them (explicitly, or for sharing a conversation). Two users in a block (either way)
/// see each other always offline.
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
        var others = try await repositories.follows.followers(app: app, user: user, logger: logger)
        let hidden = try await repositories.blocks.blockedEitherWay(app: app, user: user, among: others, logger: logger)
        others.removeAll(where: hidden.contains)
        let own = Self.change(user: user, PresenceObject(status: status, lastSeenAt: seen), urls: urls)
        _ = try await PushChannel.publish(own, app: app, users: [user], postgres: postgres, logger: logger)
        if !others.isEmpty {
            let visible = PresenceObject(status: status == "invisible" ? "offline" : status, lastSeenAt: seen)
            _ = try await PushChannel.publish(
                Self.change(user: user, visible, urls: urls), app: app, manyUsers: others, postgres: postgres, logger: logger)
        }
    }

    /// The presence of these users as `viewer` sees it, as Identity `update` change bodies in the
    /// version being rendered.
    func changes(app: UUID, users: [String], viewer: String, urls: URLBuilder, logger: Logger) async throws -> [JSONValue] {
        try await packets(app: app, users: users, viewer: viewer, urls: urls, logger: logger).map { packet in
            let body = APIVersion.current.usesIdentities ? packet.body : packet.legacyBody ?? packet.body
            return JSONValue(jsonText: body) ?? .null
        }
    }

    /// The presence of these users as `viewer` sees it, as Identity `update` packets.
    func packets(app: UUID, users: [String], viewer: String, urls: URLBuilder, logger: Logger) async throws -> [EphemeralPacket] {
        let seen = try await seen(app: app, users: users, by: viewer, logger: logger)
        return users.compactMap { user in seen[user].map { Self.change(user: user, $0, urls: urls) } }
    }

    /// How `viewer` sees the presence of each of `users`.
    func seen(app: UUID, users: [String], by viewer: String, logger: Logger) async throws -> [String: PresenceObject] {
        guard !users.isEmpty else { return [:] }
        let chosen = try await repositories.devices.chosenPresence(app: app, users: users, logger: logger)
        let online = try await repositories.devices.liveDevices(app: app, users: users, kind: .webSocket, logger: logger)
        let hidden = try await repositories.blocks.blockedEitherWay(app: app, user: viewer, among: users, logger: logger)
        var result: [String: PresenceObject] = [:]
        for user in users {
            result[user] = Self.presence(
                chosen: chosen[user], online: online[user] != nil, ownView: user == viewer, hidden: hidden.contains(user))
        }
        return result
    }

    /// How each of `viewers` sees `user`'s presence.
    func seen(app: UUID, user: String, by viewers: [String], logger: Logger) async throws -> [String: PresenceObject] {
        guard !viewers.isEmpty else { return [:] }
        let chosen = try await repositories.devices.chosenPresence(app: app, users: [user], logger: logger)[user]
        let online = try await repositories.devices.liveDevices(app: app, users: [user], kind: .webSocket, logger: logger)
        let hidden = try await repositories.blocks.blockedEitherWay(app: app, user: user, among: viewers, logger: logger)
        var result: [String: PresenceObject] = [:]
        for viewer in viewers {
            result[viewer] = Self.presence(
                chosen: chosen, online: online[user] != nil, ownView: user == viewer, hidden: hidden.contains(viewer))
        }
        return result
    }

    private static func presence(
        chosen: (status: String, seen: Date)?, online: Bool, ownView: Bool, hidden: Bool
    ) -> PresenceObject {
        if hidden { return PresenceObject(status: "offline", lastSeenAt: nil) }
        let status = online ? (chosen?.status ?? "available") : "offline"
        return PresenceObject(status: status == "invisible" && !ownView ? "offline" : status, lastSeenAt: chosen?.seen)
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

    static func change(user: String, _ presence: PresenceObject, urls: URLBuilder) -> EphemeralPacket {
        let patch: [Packets.PatchOperation] = [
            .set("presence.status", .string(presence.status)),
            .set("presence.last_seen_at", presence.lastSeenAt.map { .string(LayerTimestamp.string($0)) } ?? .null),
        ]
        return IdentityPackets.update(user, patch, urls: urls, event: "presence")
    }
}
