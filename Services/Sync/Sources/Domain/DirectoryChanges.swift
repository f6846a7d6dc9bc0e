import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import Logging

/// Tells the auth service that identities were created, changed or deleted through the Server API,
/// before the request that did it is answered: auth caches what it asked this service about users,
/// and the replica told forgets it at once and has every other replica forget it too. The notice
/// never fails the write; when auth cannot be reached, its cache time bounds how long it may
/// still answer the old identity.
struct DirectoryChanges: Sendable {
    let auth: InternalClient

    init(auth baseURL: @escaping @Sendable () -> String, internalToken: String) {
        auth = InternalClient(
            baseURL: baseURL, token: internalToken, http: .failingFast, timeout: .seconds(2), attempts: 2)
    }

    func changed(app: UUID, users: [String], logger: Logger) async {
        do {
            _ = try await auth.post(
                InternalAPI.identitiesChangedPath, body: InternalAPI.UsersRequest(appID: app, userIDs: users),
                as: InternalAPI.Acknowledgement.self, idempotent: true, logger: logger)
        } catch {
            logger.warning(
                "Could not tell the auth service that identities changed; its cache time bounds what it still answers",
                metadata: ["error": "\(error)"])
        }
    }
}
