import Foundation
import LayerModels
import LayerServer
import Logging

/// The users of an app as the auth part of the Server API sees them. The sync service owns the
/// directory (a user exists when it holds an identity for them) and is asked, through
/// ``IdentityCache``; this service adds what it owns, the sessions and suspension. A user who
/// signed in here exists too, whatever sync answers (their claims may still be on the way, or
/// the app deleted their identity while their sessions live on).
struct UserDirectory: Sendable {
    let sessions: SessionRepository
    let sync: InternalClient
    let cache: IdentityCache

    struct User: Sendable {
        var identity: InternalAPI.DirectoryIdentity
        var suspended: Bool
    }

    /// The user's identity at the sync service; nil when it has none.
    func identity(app: UUID, user: String, logger: Logger) async throws -> InternalAPI.DirectoryIdentity? {
        let key = IdentityCache.Key(app: app, user: user)
        if let kept = cache.identity(key) { return kept }
        let generation = cache.generation
        let answer = try await sync.post(
            InternalAPI.identityLookupPath, body: InternalAPI.UsersRequest(appID: app, userIDs: [user]),
            as: InternalAPI.IdentitiesResponse.self, idempotent: true, logger: logger)
        guard let identity = answer.identities.first(where: { $0.userID == user }) else { return nil }
        cache.keep(identity, for: key, askedAt: generation)
        return identity
    }

    /// The user with the identity the sync service holds (or, without one, the claims of their
    /// sign-ins here) and whether they are suspended; nil when neither service knows them.
    func user(app: UUID, user: String, logger: Logger) async throws -> User? {
        async let local = sessions.user(app: app, userID: user, logger: logger)
        let identity = try await identity(app: app, user: user, logger: logger)
        let record = try await local
        if let identity { return User(identity: identity, suspended: record?.suspended ?? false) }
        guard let record else { return nil }
        let claims = record.identity
        return User(
            identity: .init(
                userID: user, displayName: claims.displayName, avatarURL: claims.avatarURL, firstName: claims.firstName,
                lastName: claims.lastName),
            suspended: record.suspended)
    }

    /// 404 `not_found` unless the user signed in here or has an identity at the sync service.
    func requireUser(app: UUID, user: String, logger: Logger) async throws {
        if try await sessions.user(app: app, userID: user, logger: logger) != nil { return }
        guard try await identity(app: app, user: user, logger: logger) != nil else {
            throw APIError.notFound("The user '\(user)'")
        }
    }

    /// Changes the user's blocks, which the sync service keeps.
    func changeBlocks(app: UUID, owner: String, _ changes: [InternalAPI.BlockChange], logger: Logger) async throws {
        _ = try await sync.post(
            InternalAPI.blocksPath, body: InternalAPI.BlockChanges(appID: app, owner: owner, changes: changes),
            as: InternalAPI.Acknowledgement.self, idempotent: true, logger: logger)
    }
}
