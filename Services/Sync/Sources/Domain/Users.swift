import Foundation
import LayerModels
import LayerServer
import Logging

/// The users of an app as the Server API's `/apps/<app>/users/<user>` shows and changes them.
/// This service owns the user: a user exists when they have an identity here, or when the auth
/// service knows them (they signed in, their claims perhaps still on the way, or they were
/// suspended). What only the auth service knows, the sessions and suspension, it answers and
/// changes through one call (`POST /internal/v1/accounts`).
struct Users: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let blocks: Blocks
    /// The auth service.
    private let auth: InternalClient

    init(repositories: SyncRepositories, views: Views, blocks: Blocks, auth: InternalClient) {
        self.repositories = repositories
        self.views = views
        self.blocks = blocks
        self.auth = auth
    }

    /// The user with the identity held here and whether they are suspended. A user the auth
    /// service knows but who has no identity here is shown with the claims of their sign-in.
    func user(_ user: String, _ scope: Scope) async throws -> UserObject {
        async let account = account(user, nil, scope)
        let record = try await repositories.identities.identities(app: scope.app, users: [user], logger: scope.logger).first
        let known = try await account
        guard let identity = record ?? known.claims.map(IdentityRecord.init(claims:)) else {
            throw APIError.notFound("The user '\(user)'")
        }
        var presenter = views.renderer(scope)
        return UserObject(identity: presenter.identities([identity])[0], suspended: known.suspended)
    }

    /// Changes the user's blocks and suspends or reinstates them, after `patch` checked every
    /// operation. 404 `not_found` for a user nobody knows, with nothing changed.
    func update(_ user: String, _ patch: UserPatch, _ scope: Scope) async throws {
        try await requireUser(user, scope)
        if !patch.blocks.isEmpty {
            try await blocks.apply(patch.blocks, owner: user, app: scope.app, logger: scope.logger)
        }
        if let suspended = patch.suspended {
            _ = try await account(user, suspended ? .suspend : .reinstate, scope)
        }
    }

    /// Revokes every session of the user.
    func endSessions(_ user: String, _ scope: Scope) async throws {
        try await requireUser(user, scope)
        _ = try await account(user, .endSessions, scope)
    }

    /// Challenges every session of the user: each answers 401 with a nonce until renewed.
    func challenge(_ user: String, _ scope: Scope) async throws {
        try await requireUser(user, scope)
        _ = try await account(user, .challenge, scope)
    }

    /// 404 `not_found` unless the user has an identity here or the auth service knows them.
    private func requireUser(_ user: String, _ scope: Scope) async throws {
        if try await repositories.identities.userExists(app: scope.app, user: user, logger: scope.logger) { return }
        guard try await account(user, nil, scope).known else { throw APIError.notFound("The user '\(user)'") }
    }

    /// What the auth service knows of the user, after doing `action` to their sessions.
    private func account(
        _ user: String, _ action: InternalAPI.AccountRequest.Action?, _ scope: Scope
    ) async throws -> InternalAPI.Account {
        try await auth.post(
            InternalAPI.accountPath, body: InternalAPI.AccountRequest(appID: scope.app, userID: user, action: action),
            as: InternalAPI.Account.self, idempotent: true, logger: scope.logger)
    }
}

extension IdentityRecord {
    /// The identity a sign-in's claims describe.
    init(claims: InternalAPI.Identity) {
        self.init(userID: claims.userID)
        displayName = claims.displayName
        avatarURL = claims.avatarURL
        firstName = claims.firstName
        lastName = claims.lastName
    }
}
