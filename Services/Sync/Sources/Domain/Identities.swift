import Foundation
import LayerModels
import LayerServer
import Logging

/// Identities: made from each sign-in's claims, or by the app's backend, which also changes and
/// deletes them; read by the user, by those who follow them, and by the app. Changes made by the
/// backend reach the user and their followers (see ``IdentityChange``).
struct Identities: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let recorder: IdentityRecorder

    init(repositories: SyncRepositories, views: Views, recorder: IdentityRecorder) {
        self.repositories = repositories
        self.views = views
        self.recorder = recorder
    }

    /// Brings the identity of a session's user up to date with its claims (see ``IdentityRecorder``).
    func record(_ session: AuthenticatedSession, logger: Logger) async throws {
        try await recorder.record(session, logger: logger)
    }

    /// 404 `not_found` unless `user` is a user of the app (an identity, a session, a conversation).
    func requireUser(_ user: String, _ scope: Scope) async throws {
        try await repositories.identities.requireUser(app: scope.app, user: user, logger: scope.logger)
    }

    /// Whether `user` is a user of the app.
    func exists(_ user: String, _ scope: Scope) async throws -> Bool {
        try await repositories.identities.userExists(app: scope.app, user: user, logger: scope.logger)
    }

    // MARK: Reading

    /// `user`'s identity. A user sees it only if they follow `user` or are `user` (404
    /// otherwise), as they see it (``identities(_:_:)``); the app sees it whole.
    func identity(_ user: String, _ scope: Scope) async throws -> IdentityObject {
        guard let viewer = scope.viewer else {
            return try await repositories.read(logger: scope.logger) { connection in
                guard
                    let record = try await repositories.identities.identity(app: scope.app, user: user, connection, scope.logger)
                else {
                    throw APIError.notFound("The user '\(user)'")
                }
                var presenter = views.renderer(scope)
                return presenter.identities([record])[0]
            }
        }
        let visible = try await repositories.read(logger: scope.logger) { connection in
            if viewer == user { return true }
            return try await repositories.follows.follows(app: scope.app, user: viewer, followed: user, connection, scope.logger)
        }
        guard visible, let identity = try await identities([user], scope).first else {
            throw APIError.notFound("The identity")
        }
        return identity
    }

    /// The identities of those of `users` who have one, in that order, as the scope's user reads
    /// them: with the presence they see, and without the contact details of those who blocked
    /// them. Whether they may read them is the caller's business.
    func identities(_ users: [String], _ scope: Scope) async throws -> [IdentityObject] {
        guard !users.isEmpty else { return [] }
        let viewer = scope.user
        let found = try await repositories.read(logger: scope.logger) { connection in
            try await connection.identities(app: scope.app, users: users, logger: scope.logger)
        }
        let order = Dictionary(users.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var records = found.sorted { order[$0.userID, default: 0] < order[$1.userID, default: 0] }
        let present = records.map(\.userID)
        let blockers = try await repositories.blocks.blockers(app: scope.app, of: viewer, among: present, logger: scope.logger)
        for index in records.indices where blockers.contains(records[index].userID) {
            records[index].withholdContactDetails()
        }
        let presence = try await Presence(repositories: repositories, postgres: repositories.postgres, urls: scope.urls).seen(
            app: scope.app, users: present, by: viewer, logger: scope.logger)
        var presenter = views.renderer(scope)
        return presenter.identities(records).map { identity in
            var identity = identity
            identity.presence = presence[identity.basic.userID]
            return identity
        }
    }

    // MARK: The app's backend

    /// Creates `user`'s identity; 409 `conflict` (with the identity) when the user has one
    /// already, made by the backend, a session or a conversation they are in.
    func create(_ input: IdentityInput, for user: String, _ scope: Scope) async throws {
        let record = try input.record(user: user)
        guard try await repositories.identities.createIdentity(app: scope.app, record, logger: scope.logger) else {
            let existing = try? await identity(user, scope)
            throw APIError(
                .conflict, "The user '\(user)' has an identity already; replace it with PUT or change it with PATCH.",
                data: try existing.map(jsonValue))
        }
        await changed(user, .created, scope)
    }

    /// Replaces every field of the identity (absent ones become empty); 404 without one.
    func replace(_ input: IdentityInput, for user: String, _ scope: Scope) async throws {
        guard
            let (before, after) = try await repositories.identities.replaceIdentity(
                app: scope.app, try input.record(user: user), logger: scope.logger)
        else {
            throw APIError.notFound("The user '\(user)'")
        }
        await changed(user, .updated(before: before, after: after), scope)
    }

    func patch(_ user: String, operations: [LayerPatchOperation], _ scope: Scope) async throws {
        let (before, after) = try await repositories.identities.patchIdentity(
            app: scope.app, user: user, operations: operations, logger: scope.logger)
        await changed(user, .updated(before: before, after: after), scope)
    }

    func delete(_ user: String, _ scope: Scope) async throws {
        guard try await repositories.identities.deleteIdentity(app: scope.app, user: user, logger: scope.logger) else {
            throw APIError.notFound("The user '\(user)'")
        }
        recorder.forget(app: scope.app, user: user)
        await changed(user, .deleted, scope)
    }

    /// What follows a change of the backend's: the devices of the user and their followers hear it.
    private func changed(_ user: String, _ change: IdentityChange, _ scope: Scope) async {
        await IdentityChangePush(repositories: repositories, views: views).push(
            change, of: user, app: scope.app, logger: scope.logger)
    }

    // MARK: The auth service

    /// Creates or updates identities from sign-ins' claims.
    func recordClaims(_ claims: [InternalAPI.SignInClaims], app: UUID, logger: Logger) async throws {
        try await repositories.identities.recordClaims(claims, app: app, logger: logger)
    }
}
