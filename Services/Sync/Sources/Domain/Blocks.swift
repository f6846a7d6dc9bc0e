import Foundation
import LayerModels
import LayerServer
import Logging

/// Blocks: whom a user blocks, set by the app's backend (the Server API's block routes, or its
/// `PATCH` of the user). A block hides the blocker's contact details and presence from the
/// blocked user, and each change is pushed to both as the presence they may now see.
struct Blocks: Sendable {
    private let repositories: SyncRepositories
    private let views: Views

    init(repositories: SyncRepositories, views: Views) {
        self.repositories = repositories
        self.views = views
    }

    /// The users the scope's user blocked.
    func blocked(_ scope: Scope) async throws -> [BasicIdentityObject] {
        let blocked = try await repositories.blocks.blockedUsers(app: scope.app, owner: scope.user, logger: scope.logger)
        return try await repositories.read(logger: scope.logger) { connection in
            var presenter = views.presenter(scope.appWide, connection)
            try await presenter.loadIdentities(blocked)
            return blocked.map { presenter.basicIdentity($0) }
        }
    }

    /// Whom of `others` the user blocked, and who of them blocked the user (for the VoIP
    /// service: a call between them never rings).
    func between(
        _ user: String, and others: [String], app: UUID, logger: Logger
    ) async throws -> (blocked: Set<String>, blockedBy: Set<String>) {
        try await repositories.blocks.blocks(app: app, between: user, and: others, logger: logger)
    }

    /// The scope's user blocks `blocked`; blocking oneself changes nothing.
    func block(_ blocked: String, _ scope: Scope) async throws {
        let owner = scope.user
        guard blocked != owner else { return }
        try await repositories.blocks.block(app: scope.app, owner: owner, blocked: blocked, logger: scope.logger)
        await pushChange(owner: owner, blocked: blocked, app: scope.app, logger: scope.logger)
    }

    func unblock(_ blocked: String, _ scope: Scope) async throws {
        let owner = scope.user
        try await repositories.blocks.unblock(app: scope.app, owner: owner, blocked: blocked, logger: scope.logger)
        await pushChange(owner: owner, blocked: blocked, app: scope.app, logger: scope.logger)
    }

    /// Changes `owner`'s blocks as a `PATCH` of the user asks (see ``Users``). Presence is
    /// ephemeral: past a hundred users at once (lifting a long list), devices learn it from their
    /// next presence change rather than from a burst of pushes.
    func apply(_ changes: [BlockChange], owner: String, app: UUID, logger: Logger) async throws {
        let changed = try await repositories.blocks.apply(changes, app: app, owner: owner, logger: logger)
        for blocked in changed.sorted().prefix(100) {
            await pushChange(owner: owner, blocked: blocked, app: app, logger: logger)
        }
    }

    /// After a block is made or lifted: the two see each other's presence as they may now.
    private func pushChange(owner: String, blocked: String, app: UUID, logger: Logger) async {
        do {
            // Pushed to both users: rendered on the push template, which each device fills with its own base.
            let urls = views.pushURLs.urls
            try await Presence(repositories: repositories, postgres: repositories.postgres, urls: urls).blockChanged(
                app: app, between: owner, and: blocked, urls: urls, logger: logger)
        } catch {
            logger.warning("Could not push presence after a block", metadata: ["error": "\(error)"])
        }
    }
}
