import Foundation
import LayerModels
import LayerServer
import Logging

/// Identities, blocks and announcements as a user or the app reads them.
extension Messaging {
    /// `user`'s identity. With a `viewer`, only if they follow `user` or are `user` (404
    /// otherwise), as they see it (``identities(app:users:viewer:urls:logger:)``).
    func identity(app: UUID, user: String, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> IdentityObject {
        guard let viewer else {
            return try await repositories.read(logger: logger) { connection in
                guard let record = try await repositories.identities.identity(app: app, user: user, connection, logger) else {
                    throw APIError.notFound("The user '\(user)'")
                }
                var presenter = Presenter(app: app, viewer: nil, urls: urls, links: links, connection: nil, logger: logger)
                return presenter.identities([record])[0]
            }
        }
        let visible = try await repositories.read(logger: logger) { connection in
            if viewer == user { return true }
            return try await repositories.follows.follows(app: app, user: viewer, followed: user, connection, logger)
        }
        guard visible,
            let identity = try await identities(app: app, users: [user], viewer: viewer, urls: urls, logger: logger).first
        else {
            throw APIError.notFound("The identity")
        }
        return identity
    }

    /// The identities of those of `users` who have one, in that order, as `viewer` reads them:
    /// with the presence they see, and without the contact details of those who blocked them.
    /// Whether `viewer` may read them is the caller's business.
    func identities(
        app: UUID, users: [String], viewer: String, urls: URLBuilder, logger: Logger
    ) async throws -> [IdentityObject] {
        guard !users.isEmpty else { return [] }
        let found = try await repositories.read(logger: logger) { connection in
            try await connection.identities(app: app, users: users, logger: logger)
        }
        let order = Dictionary(users.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var records = found.sorted { order[$0.userID, default: 0] < order[$1.userID, default: 0] }
        let present = records.map(\.userID)
        let blockers = try await repositories.blocks.blockers(app: app, of: viewer, among: present, logger: logger)
        for index in records.indices where blockers.contains(records[index].userID) {
            records[index].withholdContactDetails()
        }
        let presence = try await Presence(repositories: repositories, postgres: repositories.postgres, urls: urls).seen(
            app: app, users: present, by: viewer, logger: logger)
        var presenter = Presenter(app: app, viewer: viewer, urls: urls, links: links, connection: nil, logger: logger)
        return presenter.identities(records).map { identity in
            var identity = identity
            identity.presence = presence[identity.basic.userID]
            return identity
        }
    }

    /// The users `owner` blocked.
    func blockedIdentities(app: UUID, owner: String, urls: URLBuilder, logger: Logger) async throws -> [BasicIdentityObject] {
        let blocked = try await repositories.blocks.blockedUsers(app: app, owner: owner, logger: logger)
        return try await repositories.read(logger: logger) { connection in
            var presenter = presenter(app: app, viewer: nil, urls: urls, connection, logger)
            try await presenter.loadIdentities(blocked)
            return blocked.map { presenter.basicIdentity($0) }
        }
    }

    /// An announcement as its recipient `viewer` sees it (nil: as the app does).
    func announcement(app: UUID, id: UUID, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> AnnouncementObject {
        try await repositories.read(logger: logger) { connection in
            let view = try await repositories.announcements.announcement(app: app, id: id, viewer: viewer, connection, logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            return try await presenter.announcements([view])[0]
        }
    }

    /// A page of the announcements sent to `user`.
    func announcements(app: UUID, user: String, paging: Paging, urls: URLBuilder, logger: Logger) async throws -> Page<
        AnnouncementObject
    > {
        try await repositories.read(logger: logger) { connection in
            let (views, total) = try await repositories.announcements.announcements(
                app: app, user: user, fromID: paging.fromID, pageSize: paging.pageSize, connection, logger)
            var presenter = presenter(app: app, viewer: user, urls: urls, connection, logger)
            return Page(items: try await presenter.announcements(views), total: total)
        }
    }
}
