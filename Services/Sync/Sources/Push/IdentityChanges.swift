import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// Identity changes made through the Server API, pushed to the user and everyone who shares a
/// conversation with them: an `update` setting every field after a create, replace or patch, a
/// `delete` (with `data` null) after a deletion. Ephemeral, like presence: the identity itself is
/// always there to read again. Those the user blocked get it without the contact details.
extension Messaging {
    func pushIdentityChange(app: UUID, user: String, deleted: Bool, request: Request, context: LayerRequestContext) async {
        // Rendered once for every recipient, each of whose devices fills in its own base.
        let urls = pushURLs.urls
        let reference = Packets.ObjectReference(type: "Identity", id: LayerID.identity(userID: user), url: urls.identity(user))
        do {
            let users = try await repositories.devices.contacts(app: app, user: user, logger: context.logger)
            let blocked = Set(try await repositories.blocks.blockedUsers(app: app, owner: user, logger: context.logger))
            var audiences = [(users: users.filter { !blocked.contains($0) }, withholding: false)]
            audiences.append((users.filter(blocked.contains), true))
            for (audience, withholding) in audiences where !audience.isEmpty {
                let change: (type: String, body: String)
                if deleted {
                    change = Packets.change("delete", reference, JSONValue.null)
                } else {
                    let identity = try await repositories.read(logger: context.logger) { connection -> JSONValue? in
                        guard
                            var record = try await repositories.identities.identity(
                                app: app, user: user, connection, context.logger)
                        else { return nil }
                        if withholding { record.withholdContactDetails() }
                        var presenter = presenter(app: app, viewer: nil, urls: urls, connection, context.logger)
                        try await presenter.loadIdentities([user])
                        return try jsonValue(presenter.identity(record))
                    }
                    guard case .object(let fields)? = identity else { return }
                    let patch = fields.filter { !["id", "url", "user_id"].contains($0.key) }.sorted { $0.key < $1.key }
                        .map { Packets.PatchOperation.set($0.key, $0.value) }
                    change = Packets.change("update", reference, patch)
                }
                _ = try await PushChannel.publish(
                    EphemeralPacket(type: change.type, body: change.body, event: "identity"), app: app, users: audience,
                    postgres: repositories.postgres, logger: context.logger)
            }
        } catch {
            context.logger.warning("Could not push an identity change", metadata: ["error": "\(error)"])
        }
    }

    /// After a block is made or lifted: the two see each other's presence as they may now.
    func pushBlockChange(app: UUID, owner: String, blocked: String, request: Request, context: LayerRequestContext) async {
        do {
            // Pushed to both users: rendered on the push template, which each device fills with its own base.
            let urls = pushURLs.urls
            try await Presence(repositories: repositories, postgres: repositories.postgres, urls: urls).blockChanged(
                app: app, between: owner, and: blocked, urls: urls, logger: context.logger)
        } catch {
            context.logger.warning("Could not push presence after a block", metadata: ["error": "\(error)"])
        }
    }
}
