import Foundation
import LayerModels
import LayerServer
import Logging

/// Following (reference 4.6), the same for a user's session and for the app's backend acting
/// for them: explicit follows and unfollows, reaching the follower's devices as Identity
/// `create` and `delete` packets, and the lists of whom a user follows.
struct Following: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let identities: Identities

    init(repositories: SyncRepositories, views: Views, identities: Identities) {
        self.repositories = repositories
        self.views = views
        self.identities = identities
    }

    /// A bulk follow pushes the identities of this many newly followed users; the follower reads
    /// the others with `GET /identities`.
    static let maxPushedFollows = 100

    /// The scope's user follows `users` explicitly (following oneself, or someone followed
    /// already, changes nothing). Each newly followed user who has an identity reaches the
    /// follower's devices as an Identity `create`, as the follower sees it. 422 naming `property`
    /// past the limit of follows.
    func follow(_ users: [String], property: String, _ scope: Scope) async throws {
        let user = scope.user
        let added = try await repositories.follows.follow(
            app: scope.app, user: user, users: users, property: property, logger: scope.logger)
        guard !added.isEmpty else { return }
        do {
            // Rendered once, each of the follower's devices filling in its own base.
            let push = views.pushScope(app: scope.app, viewer: user, logger: scope.logger)
            let shown = Array(added.prefix(Self.maxPushedFollows))
            for identity in try await identities.identities(shown, push) {
                _ = try await PushChannel.publish(
                    IdentityPackets.create(identity, urls: push.urls), app: scope.app, users: [user],
                    postgres: repositories.postgres, logger: scope.logger)
            }
        } catch {
            scope.logger.warning("Could not push new follows", metadata: ["error": "\(error)"])
        }
    }

    /// Ends the scope's user's explicit follow of `followed`, which reaches their devices as an
    /// Identity `delete`; not following them is no error. A follow that comes from sharing a
    /// conversation cannot end: 422 `invalid_operation` naming `property`.
    func unfollow(_ followed: String, property: String, _ scope: Scope) async throws {
        guard
            try await repositories.follows.unfollow(
                app: scope.app, user: scope.user, followed: followed, property: property, logger: scope.logger)
        else { return }
        do {
            _ = try await PushChannel.publish(
                IdentityPackets.delete(followed, urls: views.pushURLs.urls), app: scope.app, users: [scope.user],
                postgres: repositories.postgres, logger: scope.logger)
        } catch {
            scope.logger.warning("Could not push an unfollow", metadata: ["error": "\(error)"])
        }
    }

    /// Whether the scope's user follows `followed` (nobody follows themselves).
    func follows(_ followed: String, _ scope: Scope) async throws -> Bool {
        try await repositories.read(logger: scope.logger) { connection in
            try await repositories.follows.follows(
                app: scope.app, user: scope.user, followed: followed, connection, scope.logger)
        }
    }

    /// Those of `asked` (everyone, with nil) whom the scope's user follows.
    func followed(among asked: [String]?, _ scope: Scope) async throws -> Set<String> {
        try await repositories.follows.followed(app: scope.app, user: scope.user, among: asked, logger: scope.logger)
    }

    /// A page of whom the scope's user follows, the latest follow first: identity ids, or in 1.x
    /// user ids.
    func followedIDs(paging: IdentityPaging, _ scope: Scope) async throws -> Page<String> {
        let (users, total) = try await repositories.read(logger: scope.logger) { connection in
            try await repositories.follows.followed(
                app: scope.app, user: scope.user, identified: false, paging: paging, connection, scope.logger)
        }
        let ids = APIVersion.current.usesIdentities ? users.map { LayerID.identity(userID: $0) } : users
        return Page(items: ids, total: total)
    }

    /// A page of the identities of those the scope's user follows who have one, the latest
    /// follow first, as the user sees them.
    func followedIdentities(paging: IdentityPaging, _ scope: Scope) async throws -> Page<IdentityObject> {
        let (users, total) = try await repositories.read(logger: scope.logger) { connection in
            try await repositories.follows.followed(
                app: scope.app, user: scope.user, identified: true, paging: paging, connection, scope.logger)
        }
        return Page(items: try await identities.identities(users, scope), total: total)
    }
}
