import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The auth part of the Server API (an app's own backend, with a Server API token): the app's
/// session lifetime, and a user's sessions, challenge, suspension and blocks. A user is one the
/// sync service has an identity for (it owns the app's user directory) or who signed in here;
/// the user view shows the identity the sync service holds, with the latest edits of either kind.
struct ServerAPIController: Sendable {
    let apps: AppRepository
    let directory: UserDirectory
    let endings: SessionEndings
    let origins: AllowedOrigins

    /// `GET /apps/<app>/users/<user>`; in 1.x also the user id as `id`.
    struct UserResponse: Encodable {
        var identity: UserIdentity
        var suspended: Bool

        enum CodingKeys: String, CodingKey { case id, identity, suspended }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if !APIVersion.current.usesIdentities { try container.encode(identity.userID, forKey: .id) }
            try container.encode(identity, forKey: .identity)
            try container.encode(suspended, forKey: .suspended)
        }
    }

    /// A user's identity, in the shape of the Server API's identities (empty fields are null).
    struct UserIdentity: Encodable {
        var id: String
        var userID: String
        @Nullable var displayName: String?
        @Nullable var avatarURL: String?
        @Nullable var firstName: String?
        @Nullable var lastName: String?
        @Nullable var phoneNumber: String?
        @Nullable var emailAddress: String?
        @Nullable var publicKey: String?
        var identityType: String
        var metadata: [String: String]
        enum CodingKeys: String, CodingKey {
            case id, metadata
            case userID = "user_id"
            case displayName = "display_name"
            case avatarURL = "avatar_url"
            case firstName = "first_name"
            case lastName = "last_name"
            case phoneNumber = "phone_number"
            case emailAddress = "email_address"
            case publicKey = "public_key"
            case identityType = "identity_type"
        }

        init(_ identity: InternalAPI.DirectoryIdentity) {
            id = LayerID.identity(userID: identity.userID)
            userID = identity.userID
            displayName = identity.displayName
            avatarURL = identity.avatarURL
            firstName = identity.firstName
            lastName = identity.lastName
            phoneNumber = identity.phoneNumber
            emailAddress = identity.emailAddress
            publicKey = identity.publicKey
            identityType = identity.identityType
            metadata = identity.metadata
        }
    }

    func addRoutes(to router: Router<LayerRequestContext>) {
        let server = router.group("apps/:app")
            .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.serverAPI))
            .add(middleware: AppTokenMiddleware(verifier: apps))
        server.patch(use: updateApp)
        server.get("users/:user", use: getUser)
        server.patch("users/:user", use: updateUser)
        server.delete("users/:user/sessions", use: deleteSessions)
        server.post("users/:user/challenge", use: challenge)
    }

    @Sendable func updateApp(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try context.parameters.layerID("app", as: .apps)
        let patch = try AppSettingsPatch(try await request.decodeLayerPatch())
        _ = try await apps.updateApp(
            app.uuid, sessionTTLSeconds: patch.sessionTTLSeconds, requireCertified: patch.requireCertified,
            allowedOrigins: patch.allowedOrigins, logger: context.logger)
        if patch.allowedOrigins != nil { origins.invalidate() }
        return Response(status: .accepted)
    }

    @Sendable func getUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, userID) = try pathUser(context)
        guard let user = try await directory.user(app: app, user: userID, logger: context.logger) else {
            throw APIError.notFound("The user '\(userID)'")
        }
        return try Response.json(UserResponse(identity: UserIdentity(user.identity), suspended: user.suspended))
    }

    /// Suspends or reinstates the user and changes their blocks (kept by the sync service), after
    /// checking every operation: a body with one bad operation changes nothing. 202, or 204 when
    /// every operation was a block of the user themselves (which changes nothing).
    @Sendable func updateUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try pathUser(context)
        let patch = try UserPatch(try await request.decodeLayerPatch(limit: 1024 * 1024), user: user)
        try await directory.requireUser(app: app, user: user, logger: context.logger)
        if !patch.blocks.isEmpty {
            try await directory.changeBlocks(app: app, owner: user, patch.blocks, logger: context.logger)
        }
        if let suspended = patch.suspended {
            try await endings.setSuspended(app: app, userID: user, suspended: suspended, logger: context.logger)
        }
        return Response(status: patch.onlyBlocksOfThemselves ? .noContent : .accepted)
    }

    @Sendable func deleteSessions(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        try await endings.revoke(app: app, userID: user, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func challenge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        try await endings.challenge(app: app, userID: user, logger: context.logger)
        return Response(status: .noContent)
    }

    private func pathUser(_ context: LayerRequestContext) throws -> (UUID, String) {
        (try context.parameters.layerID("app", as: .apps).uuid, try context.parameters.appUserID("user"))
    }

    private func existingUser(_ context: LayerRequestContext) async throws -> (UUID, String) {
        let (app, user) = try pathUser(context)
        try await directory.requireUser(app: app, user: user, logger: context.logger)
        return (app, user)
    }
}

/// The app settings a Server API `PATCH /apps/<app>` may change.
struct AppSettingsPatch {
    static let sessionTTLRange = 30...31_536_000

    var sessionTTLSeconds: Int?
    var requireCertified: Bool?
    var allowedOrigins: [String]?

    init(_ operations: [LayerPatchOperation]) throws {
        for (index, operation) in operations.enumerated() {
            guard operation.operation == .set else {
                throw APIError.invalid("\(index).operation", "App settings take 'set' operations.")
            }
            switch (operation.property, operation.value) {
            case ("session_ttl_in_seconds", .number(let value)?):
                guard let seconds = Int(exactly: value), Self.sessionTTLRange.contains(seconds) else {
                    throw APIError.invalid(
                        "session_ttl_in_seconds", "session_ttl_in_seconds must be a whole number within 30...31536000.")
                }
                sessionTTLSeconds = seconds
            case ("require_certified_connections", .bool(let value)?):
                requireCertified = value
            case ("allowed_origins", .array(let values)?):
                let texts = try values.enumerated().map { position, value in
                    guard case .string(let text) = value else {
                        throw APIError.invalid("allowed_origins.\(position)", "Each allowed origin is a string.")
                    }
                    return text
                }
                allowedOrigins = try OriginRule.validatedList(texts, property: "allowed_origins")
            case ("session_ttl_in_seconds", _), ("require_certified_connections", _), ("allowed_origins", _):
                throw APIError.invalid(operation.property, "'\(operation.property)' has a value of the wrong type.")
            default:
                throw APIError.invalid("\(index).property", "'\(operation.property)' is not an app setting.")
            }
        }
    }
}
