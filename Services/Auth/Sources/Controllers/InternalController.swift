import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// What the other services ask of the auth service (`/internal/v1/…`, each route with the
/// internal tokens of the services that call it).
struct InternalController: Sendable {
    let sessions: Sessions
    let endings: SessionEndings
    let tokens: InternalTokens

    /// The services that call the auth service (`layer-auth` needs their tokens).
    static let callers = [InternalAPI.Service.sync, InternalAPI.Service.names, InternalAPI.Service.voip]

    func addRoutes(to router: LimitedRoutes) {
        // Every service with a public API checks sessions and Server API tokens and answers CORS.
        let everyService = routes(router, accepting: Self.callers)
        everyService.post("introspect", use: introspect)
        everyService.post("introspect/many", use: introspectMany)
        everyService.post("sessions", use: createSession)
        everyService.post("nonces", use: createNonce)
        everyService.post("app-tokens/verify", use: verifyAppToken)
        everyService.post("origins", use: origins)
        routes(router, accepting: [InternalAPI.Service.voip]).post("users/known", use: knownUsers)
        routes(router, accepting: [InternalAPI.Service.sync]).post("accounts", use: account)
    }

    private func routes(_ router: LimitedRoutes, accepting callers: [String]) -> RouterGroup<LayerRequestContext> {
        router.group("internal/v1").add(middleware: InternalCallerMiddleware(accepting: callers, tokens: tokens))
    }

    /// Every app's allowed web origins, for the CORS of the other services.
    @Sendable func origins(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let origins = try await sessions.apps.appOrigins(logger: context.logger)
        return try Response.json(
            InternalAPI.AppOrigins(
                apps: origins.map { .init(appID: $0.key, origins: $0.value) }.sorted { $0.appID.uuidString < $1.appID.uuidString }
            ))
    }

    /// The sync service's question about one of its users: their sessions and suspension, after
    /// doing to them what it asks (the Server API's `/apps/<app>/users/<user>` routes are sync's).
    @Sendable func account(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.AccountRequest.self, limit: 8 * 1024, allowedKeys: ["app_id", "user_id", "action"])
        let (app, user, logger) = (body.appID, try IdentityReference.userID(body.userID, property: "user_id"), context.logger)
        switch body.action {
        case .suspend?: try await endings.setSuspended(app: app, userID: user, suspended: true, logger: logger)
        case .reinstate?: try await endings.setSuspended(app: app, userID: user, suspended: false, logger: logger)
        case .endSessions?: try await endings.revoke(app: app, userID: user, logger: logger)
        case .challenge?: try await endings.challenge(app: app, userID: user, logger: logger)
        case nil: break
        }
        let record = try await sessions.sessions.user(app: app, userID: user, logger: logger)
        return try Response.json(
            InternalAPI.Account(known: record != nil, suspended: record?.suspended ?? false, claims: record?.identity))
    }

    /// Which of the named users the app knows and has not suspended (the VoIP service asks before
    /// it rings a callee).
    @Sendable func knownUsers(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.UsersRequest.self, limit: 64 * 1024, allowedKeys: ["app_id", "user_ids"])
        guard (1...1000).contains(body.userIDs.count) else {
            throw APIError.invalid("user_ids", "user_ids names 1 to 1000 users.")
        }
        let known = try await sessions.sessions.knownUsers(app: body.appID, among: body.userIDs, logger: context.logger)
        return try Response.json(InternalAPI.KnownUsersResponse(known: known))
    }

    @Sendable func verifyAppToken(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(InternalAPI.AppTokenRequest.self, limit: 8 * 1024)
        let valid = try await sessions.apps.isValidToken(body.token, app: body.appID, logger: context.logger)
        return try Response.json(InternalAPI.AppTokenResponse(valid: valid))
    }

    @Sendable func introspect(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(InternalAPI.IntrospectRequest.self, limit: 8 * 1024)
        return try Response.json(try await sessions.introspect(token: body.token, logger: context.logger))
    }

    @Sendable func introspectMany(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(InternalAPI.IntrospectManyRequest.self, limit: 1024 * 1024)
        guard body.tokens.count <= InternalAPI.IntrospectManyRequest.limit else {
            throw APIError.invalid("tokens", "At most \(InternalAPI.IntrospectManyRequest.limit) tokens in one request.")
        }
        let sessions = try await self.sessions.introspect(tokens: body.tokens, logger: context.logger)
        return try Response.json(InternalAPI.IntrospectManyResponse(sessions: sessions))
    }

    @Sendable func createSession(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(InternalAPI.CreateSessionRequest.self, limit: 16 * 1024)
        let opened = try await sessions.open(
            identityToken: body.identityToken, app: nil, certificateThumbprint: body.certificateThumbprint,
            renewing: nil, logger: context.logger)
        return try Response.json(opened.response, status: .created)
    }

    @Sendable func createNonce(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.json(
            InternalAPI.NonceResponse(nonce: try await sessions.nonces.create(logger: context.logger)), status: .created)
    }
}
