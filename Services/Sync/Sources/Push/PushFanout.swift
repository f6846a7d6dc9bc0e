import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// Moves changes from the changelog to the devices connected here. Each round takes every user
/// with changes waiting, reads their changelogs after the oldest position of their devices in one
/// query, renders each change once per user (its URLs on the push template, which each device's
/// writer fills with the device's own base), and offers it to each device in seq order. A device
/// never skips a change: it takes them strictly in order, or stops taking them while its outbox
/// is full and is looked at again when it has drained.
struct PushFanout: Service {
    let push: Push
    let logger: Logger

    private var hub: PushHub { push.hub }

    func run() async throws {
        await withGracefulShutdownHandler {
            while let waiting = await hub.takeWaiting() {
                do {
                    try await deliver(waiting)
                } catch {
                    logger.warning("Push fan-out failed; retrying", metadata: ["error": "\(String(reflecting: error))"])
                    try? await Task.sleep(for: .milliseconds(500))
                    hub.markWaiting(waiting)
                }
            }
        } onGracefulShutdown: {
            hub.stop()
        }
    }

    func deliver(_ waiting: Set<UserKey>) async throws {
        for (app, keys) in Dictionary(grouping: waiting, by: \.app) {
            var devices: [String: [PushDevice]] = [:]
            for key in keys {
                let ready = hub.devices(of: key).filter { $0.wantsChanges() }
                if !ready.isEmpty { devices[key.user] = ready }
            }
            guard !devices.isEmpty else { continue }
            let positions = devices.map { (user: $0.key, seq: $0.value.map(\.seq).min()!) }
            let versions = devices.mapValues { Set($0.map(\.version)) }
            let started = ContinuousClock.now
            let rendered = try await push.repositories.read(logger: logger) { connection in
                try await push.render(
                    app: app, after: positions, versions: versions, urls: push.template.urls, connection, logger)
            }
            logger.debug(
                "Push round",
                metadata: [
                    "users": "\(positions.count)", "changes": "\(rendered.values.map(\.count).reduce(0, +))",
                    "duration": "\(ContinuousClock.now - started)",
                ])
            var again: [UserKey] = []
            for (user, changes) in rendered {
                for device in devices[user] ?? [] {
                    for change in changes where !device.offer(change) { break }
                }
                if changes.count == push.settings.batch { again.append(UserKey(app: app, user: user)) }
            }
            hub.markWaiting(again)
        }
    }
}

/// Rendering changelog rows for devices: by the fan-out, and again for `Event.replay`.
extension Push {
    /// One user's changes after `seq`, one batch of them, rendered in `version`.
    func rendered(
        app: UUID, user: String, after seq: Int64, version: APIVersion, urls: URLBuilder, logger: Logger
    ) async throws -> [RenderedChange] {
        try await repositories.read(logger: logger) { connection in
            try await render(app: app, after: [(user, seq)], versions: [user: [version]], urls: urls, connection, logger)[user]
                ?? []
        }
    }

    /// The changes after each position, rendered for their user, in seq order per user; their
    /// packets in the API versions of each user's devices (3.0 for a user not listed).
    func render(
        app: UUID, after positions: [(user: String, seq: Int64)], versions: [String: Set<APIVersion>], urls: URLBuilder,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [String: [RenderedChange]] {
        let entries = try await repositories.changelog.changelog(
            app: app, after: positions, limit: settings.batch, connection, logger)
        guard !entries.isEmpty else { return [:] }
        let presenter = Presenter(
            app: app, viewer: nil, urls: urls, links: links, reads: PresenterReads(connection), logger: logger)
        let operations = try await presenter.operations(entries)
        var moved = Set<ConversationUser>()
        for entry in entries {
            guard let conversation = entry.conversation else { continue }
            switch entry.type {
            case .newMessage:
                moved.insert(ConversationUser(conversation: conversation, user: entry.user))
            case .updateStatus where entry.data["user_id"]?.stringValue == entry.user:
                moved.insert(ConversationUser(conversation: conversation, user: entry.user))
            default:
                break
            }
        }
        let unread = try await repositories.changelog.unreadCounts(app: app, moved, connection, logger)
        var result: [String: [RenderedChange]] = [:]
        for (entry, operation) in zip(entries, operations) {
            let count = entry.conversation.flatMap { unread[ConversationUser(conversation: $0, user: entry.user)] }
            var packets: [APIVersion: [(type: String, body: String)]] = [:]
            for version in versions[entry.user] ?? [.v3_0] {
                packets[version] = APIVersion.$current.withValue(version) {
                    Packets.packets(for: operation, viewer: entry.user, unread: count, urls: urls)
                }
            }
            result[entry.user, default: []].append(
                RenderedChange(
                    seq: entry.seq, timestamp: entry.timestamp, type: entry.type.rawValue,
                    operation: Packets.json(operation), packets: packets))
        }
        return result
    }
}
