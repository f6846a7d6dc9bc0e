import Foundation
import Hummingbird
import LayerModels
import LayerServer
import _CryptoExtras

/// The operator's API (the original product's developer dashboard): apps, identity providers,
/// their keys and Server API tokens. Guarded by the operator token.
struct AdminController: Sendable {
    let apps: AppRepository
    let sessions: SessionRepository
    let endings: SessionEndings
    let operatorToken: String
    /// Told when an app's allowed origins change, so that they apply at once.
    let origins: AllowedOrigins
    /// The sync service, owner of the apps' push providers.
    let sync: InternalClient

    struct CreateApp: Decodable {
        var name: String
        var allowedOrigins: [String]?
        enum CodingKeys: String, CodingKey {
            case name
            case allowedOrigins = "allowed_origins"
        }
    }

    struct AppResponse: Codable {
        var id: String
        var name: String
        var createdAt: Date
        var sessionTTLInSeconds: Int
        var requireCertifiedConnections: Bool
        var allowedOrigins: [String]
        enum CodingKeys: String, CodingKey {
            case id, name
            case createdAt = "created_at"
            case sessionTTLInSeconds = "session_ttl_in_seconds"
            case requireCertifiedConnections = "require_certified_connections"
            case allowedOrigins = "allowed_origins"
        }

        init(_ app: AppRecord) {
            id = LayerID(.apps, app.id).uri
            name = app.name
            createdAt = app.createdAt
            sessionTTLInSeconds = app.sessionTTLSeconds
            requireCertifiedConnections = app.requireCertified
            allowedOrigins = app.allowedOrigins
        }
    }

    struct UpdateApp: Decodable {
        var sessionTTLInSeconds: Int?
        var requireCertifiedConnections: Bool?
        var allowedOrigins: [String]?
        enum CodingKeys: String, CodingKey {
            case sessionTTLInSeconds = "session_ttl_in_seconds"
            case requireCertifiedConnections = "require_certified_connections"
            case allowedOrigins = "allowed_origins"
        }
    }

    struct CreateProvider: Decodable { var name: String? }
    struct ProviderResponse: Codable {
        var id: String
        var appID: String
        var name: String?
        enum CodingKeys: String, CodingKey {
            case id, name
            case appID = "app_id"
        }
    }

    struct RegisterKey: Decodable {
        var publicKey: String
        enum CodingKeys: String, CodingKey { case publicKey = "public_key" }
    }

    struct KeyResponse: Codable {
        var id: String
        var providerID: String
        var enabled: Bool
        enum CodingKeys: String, CodingKey {
            case id, enabled
            case providerID = "provider_id"
        }

        init(_ key: KeyRecord) {
            id = LayerID(.keys, key.id).uri
            providerID = LayerID(.providers, key.providerID).uri
            enabled = key.enabled
        }
    }

    struct UpdateKey: Decodable { var enabled: Bool }

    struct TokenResponse: Codable {
        var id: String
        var token: String
    }

    func addRoutes(to router: LimitedRoutes) {
        let admin = router.group("admin").add(middleware: StaticBearerMiddleware(token: operatorToken, realm: "operator"))
        admin.post("apps", use: createApp)
        admin.get("apps/:app", use: getApp)
        admin.patch("apps/:app", use: updateApp)
        admin.post("apps/:app/providers", use: createProvider)
        admin.post("apps/:app/providers/:provider/keys", use: registerKey)
        admin.patch("apps/:app/providers/:provider/keys/:key", use: updateKey)
        admin.delete("apps/:app/providers/:provider/keys/:key", use: deleteKey)
        admin.post("apps/:app/tokens", use: createToken)
        admin.delete("apps/:app/tokens/:token", use: revokeToken)
        admin.post("apps/:app/users/:user/challenge", use: challengeUser)
        admin.delete("certificates/:certificate", use: revokeCertificate)
        addPushRoutes(to: admin)
    }

    @Sendable func createApp(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(CreateApp.self)
        let name = try validateName(body.name, property: "name")
        let allowed = try OriginRule.validatedList(body.allowedOrigins ?? [], property: "allowed_origins")
        let app = try await apps.createApp(name: name, allowedOrigins: allowed, logger: context.logger)
        if !allowed.isEmpty { origins.invalidate() }
        var response = try Response.json(AppResponse(app), status: .created)
        response.headers[.location] = "/admin/apps/\(app.id.lowercased)"
        return response
    }

    @Sendable func getApp(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.json(AppResponse(try await app(context)))
    }

    @Sendable func updateApp(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let id = try await app(context).id
        let body = try await request.decodeJSON(UpdateApp.self)
        if let ttl = body.sessionTTLInSeconds, !AppSettingsPatch.sessionTTLRange.contains(ttl) {
            throw APIError.invalid("session_ttl_in_seconds", "session_ttl_in_seconds must be within 30...31536000.")
        }
        let allowed = try body.allowedOrigins.map { try OriginRule.validatedList($0, property: "allowed_origins") }
        guard
            let app = try await apps.updateApp(
                id, sessionTTLSeconds: body.sessionTTLInSeconds, requireCertified: body.requireCertifiedConnections,
                allowedOrigins: allowed, logger: context.logger)
        else { throw APIError.notFound("The app") }
        if allowed != nil { origins.invalidate() }
        return try Response.json(AppResponse(app))
    }

    @Sendable func createProvider(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        let body = try await request.decodeOptionalJSON(CreateProvider.self) ?? CreateProvider(name: nil)
        let name = try body.name.map { try validateName($0, property: "name") }
        let id = try await apps.createProvider(app: app.id, name: name, logger: context.logger)
        return try Response.json(
            ProviderResponse(id: LayerID(.providers, id).uri, appID: LayerID(.apps, app.id).uri, name: name),
            status: .created)
    }

    @Sendable func registerKey(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, provider) = try await appAndProvider(context)
        let body = try await request.decodeJSON(RegisterKey.self)
        guard (try? _RSA.Signing.PublicKey(pemRepresentation: body.publicKey)) != nil else {
            throw APIError.invalid(
                "public_key", "The public_key must be a PEM RSA public key of at least 2048 bits.")
        }
        let key = try await apps.createKey(
            app: app, provider: provider, publicKeyPEM: body.publicKey, logger: context.logger)
        return try Response.json(KeyResponse(key), status: .created)
    }

    @Sendable func updateKey(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, provider) = try await appAndProvider(context)
        let key = try context.parameters.layerID("key", as: .keys)
        let body = try await request.decodeJSON(UpdateKey.self)
        guard
            let updated = try await apps.setKeyEnabled(
                key.uuid, app: app, provider: provider, enabled: body.enabled, logger: context.logger)
        else { throw APIError.notFound("The key") }
        return try Response.json(KeyResponse(updated))
    }

    @Sendable func deleteKey(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, provider) = try await appAndProvider(context)
        let key = try context.parameters.layerID("key", as: .keys)
        guard try await apps.deleteKey(key.uuid, app: app, provider: provider, logger: context.logger) else {
            throw APIError.notFound("The key")
        }
        return Response(status: .noContent)
    }

    @Sendable func createToken(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        let created = try await apps.createToken(app: app.id, logger: context.logger)
        return try Response.json(
            TokenResponse(id: LayerID(.tokens, created.id).uri, token: created.token), status: .created)
    }

    @Sendable func revokeToken(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        let token = try context.parameters.layerID("token", as: .tokens)
        guard try await apps.revokeToken(token.uuid, app: app.id, logger: context.logger) else {
            throw APIError.notFound("The token")
        }
        return Response(status: .noContent)
    }

    @Sendable func challengeUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        let user = try context.parameters.appUserID("user")
        guard try await sessions.user(app: app.id, userID: user, logger: context.logger) != nil else {
            throw APIError.notFound("The user")
        }
        try await endings.challenge(app: app.id, userID: user, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func revokeCertificate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let certificate = try context.parameters.layerID("certificate", as: .certificates)
        guard try await endings.revokeCertificate(certificate.uuid, logger: context.logger) else {
            throw APIError.notFound("The certificate")
        }
        return Response(status: .noContent)
    }

    // MARK: Helpers

    func app(_ context: LayerRequestContext) async throws -> AppRecord {
        let id = try context.parameters.layerID("app", as: .apps)
        guard let app = try await apps.app(id.uuid, logger: context.logger) else { throw APIError.notFound("The app") }
        return app
    }

    private func appAndProvider(_ context: LayerRequestContext) async throws -> (UUID, UUID) {
        let app = try await app(context)
        let provider = try context.parameters.layerID("provider", as: .providers)
        guard try await apps.providerApp(provider.uuid, logger: context.logger) == app.id else {
            throw APIError.notFound("The provider")
        }
        return (app.id, provider.uuid)
    }
}
