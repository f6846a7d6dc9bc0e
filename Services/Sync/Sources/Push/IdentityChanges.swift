import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// Identity changes made through the Server API, pushed to the user and everyone who shares a
/// conversation with them: an `update` setting every field after a create, replace or patch, a
/// `delete` (with `data` null) after a deletion. Ephemeral, like presence: the identity itself is
/// always there to read again.
extension Messaging {
    func pushIdentityChange(app: UUID, user: String, deleted: Bool, request: Request, context: LayerRequestContext) async {
        // Rendered once for every recipient, each of whose devices fills in its own base.
        let urls = pushURLs.urls
        let reference = Packets.ObjectReference(type: "Identity", id: LayerID.identity(userID: user), url: urls.identity(user))
        do {
            let change: (type: String, body: String)
            if deleted {
                change = Packets.change("delete", reference, JSONValue.null)
            } else {
                let identity = try await repositories.read(logger: context.logger) { connection -> JSONValue? in
                    guard
                        let record = try await repositories.identities.identity(app: app, user: user, connection, context.logger)
                    else { return nil }
                    var presenter = presenter(app: app, viewer: nil, urls: urls, connection, context.logger)
                    try await presenter.loadIdentities([user])
                    return try jsonValue(presenter.identity(record))
                }
                guard case .object(let fields)? = identity else { return }
                let patch = fields.filter { !["id", "url", "user_id"].contains($0.key) }.sorted { $0.key < $1.key }
                    .map { Packets.PatchOperation.set($0.key, $0.value) }
                change = Packets.change("update", reference, patch)
            }
            let users = try await repositories.devices.contacts(app: app, user: user, logger: context.logger)
            _ = try await PushChannel.publish(
                EphemeralPacket(type: change.type, body: change.body, event: "identity"), app: app, users: users,
                postgres: repositories.postgres, logger: context.logger)
        } catch {
            context.logger.warning("Could not push an identity change", metadata: ["error": "\(error)"])
        }
    }
}
