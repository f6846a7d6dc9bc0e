import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The app's user directory as the auth service uses it (`/internal/v1/…`, internal token). The
/// sync service owns identities: auth reports the claims of each sign-in here, asks here whether
/// a user exists and what their identity is for its Server API routes, and forwards the block
/// operations of `PATCH /apps/:app/users/:user`. The VoIP service asks here whether a caller and
/// a callee blocked one another.
struct DirectoryController {
    let domain: SyncDomain

    /// The most users one request names.
    static let maxUsers = 1000

    func addRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("identities/lookup", use: lookup)
        internalRoutes.post("identities/claims", use: recordClaims)
        internalRoutes.post("blocks", use: changeBlocks)
    }

    /// The routes of the VoIP service.
    func addCallRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("blocks/between", use: blocksBetween)
    }

    /// Whom of the others the user blocked, and who of them blocked the user.
    @Sendable func blocksBetween(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.BlocksBetweenRequest.self, limit: 256 * 1024, allowedKeys: ["app_id", "user_id", "user_ids"])
        let user = try userID(fromText: body.userID, property: "user_id")
        let others = try Self.users(body.userIDs, property: "user_ids")
        let found = try await domain.blocks.between(user, and: others, app: body.appID, logger: context.logger)
        return try Response.json(InternalAPI.BlocksBetween(blocked: found.blocked.sorted(), blockedBy: found.blockedBy.sorted()))
    }

    /// The identities of those of the users who exist.
    @Sendable func lookup(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.UsersRequest.self, limit: 256 * 1024, allowedKeys: ["app_id", "user_ids"])
        let users = try Self.users(body.userIDs, property: "user_ids")
        let identities = try await domain.identities.directoryIdentities(users, app: body.appID, logger: context.logger)
        return try Response.json(InternalAPI.IdentitiesResponse(identities: identities))
    }

    /// Creates or updates identities from sign-ins' claims; answers whose existing identity changed
    /// (what the auth service may have cached). A claim for what cannot be a user id
    /// here is left out rather than refused, so that it does not hold up the others of its batch
    /// (the auth service would report the batch again and again).
    @Sendable func recordClaims(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.ClaimsReport.self, limit: 1024 * 1024, allowedKeys: ["app_id", "claims"])
        guard body.claims.count <= Self.maxUsers else {
            throw APIError.invalid("claims", "At most \(Self.maxUsers) claims at once.")
        }
        let claims = body.claims.filter {
            (try? userID(fromText: $0.identity.userID, property: "user_id")) == $0.identity.userID
        }
        if claims.count < body.claims.count {
            context.logger.warning(
                "Left out claims of users whose ids are no user ids", metadata: ["count": "\(body.claims.count - claims.count)"])
        }
        let changed = try await domain.identities.recordClaims(claims, app: body.appID, logger: context.logger)
        return try Response.json(InternalAPI.ClaimsRecorded(changed: changed))
    }

    /// Changes a user's blocks, then tells the users concerned what they may now see of each
    /// other's presence.
    @Sendable func changeBlocks(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.BlockChanges.self, limit: 2 * 1024 * 1024, allowedKeys: ["app_id", "owner", "changes"])
        let owner = try userID(fromText: body.owner, property: "owner")
        guard body.changes.count <= Self.maxUsers else {
            throw APIError.invalid("changes", "At most \(Self.maxUsers) changes at once.")
        }
        for (index, change) in body.changes.enumerated() {
            let limit = BlockRepository.maxBlocks
            guard change.userIDs.count <= limit else {
                throw APIError.invalid("changes.\(index).user_ids", "At most \(limit) users.")
            }
            for (position, user) in change.userIDs.enumerated() {
                _ = try userID(fromText: user, property: "changes.\(index).user_ids.\(position)")
            }
        }
        try await domain.blocks.apply(body.changes, owner: owner, app: body.appID, logger: context.logger)
        return try Response.json(InternalAPI.Acknowledgement())
    }

    /// The user ids of a request, each checked; 1 to ``maxUsers`` of them.
    static func users(_ users: [String], property: String) throws -> [String] {
        guard (1...maxUsers).contains(users.count) else {
            throw APIError.invalid(property, "\(property) names 1 to \(maxUsers) users.")
        }
        return try users.enumerated().map { try userID(fromText: $1, property: "\(property).\($0)") }
    }
}
