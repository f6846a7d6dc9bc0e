import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// What the other services of the suite ask of this one about users (`/internal/v1/…`, each with
/// its caller's internal token): the auth service reports the claims of each sign-in, and the
/// VoIP service asks whether a caller and a callee blocked one another.
struct InternalController {
    let domain: SyncDomain

    /// The most users one request names.
    static let maxUsers = 1000

    /// The routes of the auth service.
    func addRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("identities/claims", use: recordClaims)
        internalRoutes.post("push/providers", use: pushProviders)
    }

    /// The operator's view and changes of an app's push providers, relayed by the auth service's
    /// admin API (which checked the operator and that the app exists).
    @Sendable func pushProviders(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.PushProvidersRequest.self, limit: 64 * 1024, allowedKeys: ["app_id", "action", "provider", "credentials"])
        return try Response.json(try await domain.pushNotifications.providers(body, logger: context.logger))
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

    /// Creates or updates identities from sign-ins' claims. A claim for what cannot be a user id
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
        try await domain.identities.recordClaims(claims, app: body.appID, logger: context.logger)
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
