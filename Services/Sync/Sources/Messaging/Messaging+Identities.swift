import Foundation
import LayerModels
import LayerServer
import Logging

/// Identities, blocks and announcements as a user or the app reads them.
extension Messaging {
    /// `user`'s identity. With a `viewer`, only if the two share a conversation (404 otherwise),
    /// and without the contact details if `user` blocked the viewer.
    func identity(app: UUID, user: String, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> IdentityObject {
        try await repositories.read(logger: logger) { connection in
            if let viewer,
                try await !repositories.identities.sharesConversation(app: app, viewer: viewer, user: user, connection, logger)
            {
                throw APIError.notFound("The identity")
            }
            guard var record = try await repositories.identities.identity(app: app, user: user, connection, logger) else {
                throw APIError.notFound(viewer == nil ? "The user '\(user)'" : "The identity")
            }
            if let viewer, try await !connection.blockedBy(user, among: [viewer], app: app, logger: logger).isEmpty {
                record.withholdContactDetails()
            }
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            try await presenter.loadIdentities([user])
            return presenter.identity(record)
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
