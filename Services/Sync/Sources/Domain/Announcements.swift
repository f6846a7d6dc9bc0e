import Foundation
import LayerModels
import LayerServer
import Logging

/// Announcements: sent by the app's backend to up to a thousand of its users as a named system
/// sender or as one of its users; each recipient lists, reads, acknowledges and deletes their own.
struct Announcements: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let identities: Identities
    private let content: RichContent
    private let tags: RequestTags

    init(repositories: SyncRepositories, views: Views, identities: Identities, content: RichContent) {
        self.repositories = repositories
        self.views = views
        self.identities = identities
        self.content = content
        tags = RequestTags(repository: repositories.requestTags)
    }

    /// An announcement to send: its recipients (user ids, each once), sender, parts and notification.
    struct NewAnnouncement: Sendable {
        var recipients: [String]
        var sender: MessageRepository.Sender
        /// The request property that named the sender, for errors about it.
        var senderProperty: String
        var parts: [PartInput]?
        var notification: JSONValue?
    }

    /// Sends an announcement and answers it in the system view. A request `tag` makes it safe to
    /// repeat. A sending user must be a user of the app (422 naming the sender's property).
    func send(_ new: NewAnnouncement, tag: UUID?, _ scope: Scope) async throws -> AnnouncementObject {
        let notification = try RichContent.notification(new.notification)
        var id = UUID()
        if let tag { id = try await tags.reserve(tag, collection: .announcements, scope) }
        var parts = try PartRules.validate(new.parts, messageID: id)
        if let user = new.sender.userID, try await !identities.exists(user, scope) {
            throw APIError.invalid(new.senderProperty, "'\(user)' is not a user of this app.")
        }
        parts = try await content.resolve(parts, owner: new.sender.userID, scope)
        _ = try await repositories.announcements.createAnnouncement(
            app: scope.app,
            AnnouncementRepository.NewAnnouncement(
                id: id, recipients: new.recipients, sender: new.sender, parts: parts, notification: notification),
            logger: scope.logger)
        return try await announcement(id, scope.appWide)
    }

    /// An announcement as its recipient sees it (the app: as it was sent).
    func announcement(_ id: UUID, _ scope: Scope) async throws -> AnnouncementObject {
        try await repositories.read(logger: scope.logger) { connection in
            let view = try await repositories.announcements.announcement(
                app: scope.app, id: id, viewer: scope.viewer, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            return try await presenter.announcements([view])[0]
        }
    }

    /// A page of the announcements sent to the scope's user.
    func list(paging: Paging, _ scope: Scope) async throws -> Page<AnnouncementObject> {
        try await repositories.read(logger: scope.logger) { connection in
            let (views, total) = try await repositories.announcements.announcements(
                app: scope.app, user: scope.user, fromID: paging.fromID, pageSize: paging.pageSize, connection, scope.logger)
            var presenter = self.views.presenter(scope, connection)
            return Page(items: try await presenter.announcements(views), total: total)
        }
    }

    func delete(_ id: UUID, _ scope: Scope) async throws {
        try await repositories.announcements.deleteAnnouncement(app: scope.app, user: scope.user, id: id, logger: scope.logger)
    }

    func addReceipt(_ id: UUID, status: ReceiptStatus, _ scope: Scope) async throws {
        try await repositories.announcements.addAnnouncementReceipt(
            app: scope.app, user: scope.user, id: id, status: status, logger: scope.logger)
    }
}
