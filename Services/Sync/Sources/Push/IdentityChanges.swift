import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// What happened to an identity through the Server API.
enum IdentityChange: Sendable {
    case created
    case updated(before: IdentityRecord, after: IdentityRecord)
    case deleted
}

/// Identity changes made through the Server API, pushed to the user and to everyone who follows
/// them: a `create` with the whole identity (as each of them sees it, presence included), an
/// `update` of only the fields that changed, a `delete` (with `data` null). Ephemeral, like
/// presence: the identity itself is always there to read again. Those the user blocked get it
/// without the contact details (and no `update` at all when only those changed).
struct IdentityChangePush: Sendable {
    let repositories: SyncRepositories
    let views: Views

    func push(_ change: IdentityChange, of user: String, app: UUID, logger: Logger) async {
        // Rendered once for every recipient, each of whose devices fills in its own base.
        let urls = views.pushURLs.urls
        do {
            let audience = [user] + (try await repositories.follows.followers(app: app, user: user, logger: logger))
            let blocked = Set(try await repositories.blocks.blockedUsers(app: app, owner: user, logger: logger))
            switch change {
            case .deleted:
                try await publishIdentity(IdentityPackets.delete(user, urls: urls), app: app, to: audience, logger: logger)
            case .updated(let before, let after):
                for withholding in [false, true] {
                    let users = audience.filter { blocked.contains($0) == withholding }
                    var (old, new) = (before, after)
                    if withholding {
                        old.withholdContactDetails()
                        new.withholdContactDetails()
                    }
                    let patch = IdentityPackets.patch(from: old, to: new)
                    guard !users.isEmpty, !patch.isEmpty else { continue }
                    let packet = IdentityPackets.update(user, patch, urls: urls, event: "identity")
                    try await publishIdentity(packet, app: app, to: users, logger: logger)
                }
            case .created:
                try await pushCreatedIdentity(app: app, user: user, to: audience, withholdingFrom: blocked, logger: logger)
            }
        } catch {
            logger.warning("Could not push an identity change", metadata: ["error": "\(error)"])
        }
    }

    /// The new identity, rendered once for each group of recipients who see it alike.
    private func pushCreatedIdentity(
        app: UUID, user: String, to audience: [String], withholdingFrom blocked: Set<String>, logger: Logger
    ) async throws {
        let urls = views.pushURLs.urls
        guard
            let record = try await repositories.read(
                logger: logger, { try await repositories.identities.identity(app: app, user: user, $0, logger) })
        else { return }
        let presence = try await Presence(repositories: repositories, postgres: repositories.postgres, urls: urls).seen(
            app: app, user: user, by: audience, logger: logger)
        var groups: [(withholding: Bool, presence: PresenceObject?, users: [String])] = []
        for viewer in audience {
            let (withholding, seen) = (blocked.contains(viewer), presence[viewer])
            if let index = groups.firstIndex(where: { $0.withholding == withholding && $0.presence == seen }) {
                groups[index].users.append(viewer)
            } else {
                groups.append((withholding, seen, [viewer]))
            }
        }
        for group in groups {
            var shown = record
            if group.withholding { shown.withholdContactDetails() }
            var presenter = views.renderer(views.pushScope(app: app, viewer: nil, logger: logger))
            var identity = presenter.identities([shown])[0]
            identity.presence = group.presence
            try await publishIdentity(IdentityPackets.create(identity, urls: urls), app: app, to: group.users, logger: logger)
        }
    }

    private func publishIdentity(_ packet: EphemeralPacket, app: UUID, to users: [String], logger: Logger) async throws {
        guard
            try await PushChannel.publish(
                packet, app: app, manyUsers: users, postgres: repositories.postgres, logger: logger)
        else {
            // Past the push channel's payload limit (a long public key and metadata): clients
            // read the identity again when they need it.
            logger.warning("An identity change is too large to push", metadata: ["users": "\(users.count)"])
            return
        }
    }
}
