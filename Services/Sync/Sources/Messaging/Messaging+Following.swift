import Foundation
import LayerModels
import LayerServer
import Logging

/// Following (reference 4.6), the same for a user's session and for the app's backend acting
/// for them: explicit follows and unfollows, reaching the follower's devices as Identity
/// `create` and `delete` packets, and the lists of whom a user follows.
extension Messaging {
    /// A bulk follow pushes the identities of this many newly followed users; the follower reads
    /// the others with `GET /identities`.
    static let maxPushedFollows = 100

    /// `user` follows `users` explicitly (following oneself, or someone followed already, changes
    /// nothing). Each newly followed user who has an identity reaches `user`'s devices as an
    /// Identity `create`, as `user` sees it. 422 naming `property` past the limit of follows.
    func follow(app: UUID, user: String, users: [String], property: String, logger: Logger) async throws {
        let added = try await repositories.follows.follow(app: app, user: user, users: users, property: property, logger: logger)
        guard !added.isEmpty else { return }
        do {
            // Rendered once, each of the follower's devices filling in its own base.
            let urls = pushURLs.urls
            let shown = Array(added.prefix(Self.maxPushedFollows))
            for identity in try await identities(app: app, users: shown, viewer: user, urls: urls, logger: logger) {
                _ = try await PushChannel.publish(
                    IdentityPackets.create(identity, urls: urls), app: app, users: [user], postgres: repositories.postgres,
                    logger: logger)
            }
        } catch {
            logger.warning("Could not push new follows", metadata: ["error": "\(error)"])
        }
    }

    /// Ends `user`'s explicit follow of `followed`, which reaches their devices as an Identity
    /// `delete`; not following them is no error. A follow that comes from sharing a conversation
    /// cannot end: 422 `invalid_operation` naming `property`.
    func unfollow(app: UUID, user: String, followed: String, property: String, logger: Logger) async throws {
        guard
            try await repositories.follows.unfollow(
                app: app, user: user, followed: followed, property: property, logger: logger)
        else { return }
        do {
            _ = try await PushChannel.publish(
                IdentityPackets.delete(followed, urls: pushURLs.urls), app: app, users: [user],
                postgres: repositories.postgres, logger: logger)
        } catch {
            logger.warning("Could not push an unfollow", metadata: ["error": "\(error)"])
        }
    }

    /// Whether `user` follows `followed` (nobody follows themselves).
    func isFollowing(app: UUID, user: String, followed: String, logger: Logger) async throws -> Bool {
        try await repositories.read(logger: logger) { connection in
            try await repositories.follows.follows(app: app, user: user, followed: followed, connection, logger)
        }
    }

    /// A page of whom `user` follows, the latest follow first: identity ids, or in 1.x user ids.
    func followedIDs(app: UUID, user: String, paging: IdentityPaging, logger: Logger) async throws -> Page<String> {
        let (users, total) = try await repositories.read(logger: logger) { connection in
            try await repositories.follows.followed(
                app: app, user: user, identified: false, paging: paging, connection, logger)
        }
        let ids = APIVersion.current.usesIdentities ? users.map { LayerID.identity(userID: $0) } : users
        return Page(items: ids, total: total)
    }

    /// A page of the identities of those `user` follows who have one, the latest follow first,
    /// as `user` sees them.
    func followedIdentities(
        app: UUID, user: String, paging: IdentityPaging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<IdentityObject> {
        let (users, total) = try await repositories.read(logger: logger) { connection in
            try await repositories.follows.followed(
                app: app, user: user, identified: true, paging: paging, connection, logger)
        }
        return Page(items: try await identities(app: app, users: users, viewer: user, urls: urls, logger: logger), total: total)
    }
}
