import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The auth part of the Server API (an app's own backend, with a Server API token): the app's
/// session lifetime, and a user's sessions, challenge and suspension.
struct ServerAPIController: Sendable {
    let apps: AppRepository
    let sessions: SessionRepository
    let endings: SessionEndings

    struct UserResponse: Encodable {
        var identity: BasicIdentity
        var suspended: Bool
    }

    /// The identity fields the auth service holds, in the shape of the API's identities.
    struct BasicIdentity: Encodable {
        var id: String
        var userID: String
        @Nullable var displayName: String?
        @Nullable var avatarURL: String?
        @Nullable var firstName: String?
        @Nullable var lastName: String?
        enum CodingKeys: String, CodingKey {
            case id
            case userID = "user_id"
            case displayName = "display_name"
            case avatarURL = "avatar_url"
            case firstName = "first_name"
            case lastName = "last_name"
        }

        init(_ identity: InternalAPI.Identity) {
            id = LayerID.identity(userID: identity.userID)
            userID = identity.userID
            displayName = identity.displayName
            avatarURL = identity.avatarURL
            firstName = identity.firstName
            lastName = identity.lastName
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
            logger: context.logger)
        return Response(status: .accepted)
    }

    @Sendable func getUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (_, user) = try await existingUser(context)
        return try Response.json(UserResponse(identity: BasicIdentity(user.identity), suspended: user.suspended))
    }

    @Sendable func updateUser(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        var suspended: Bool?
        for (index, operation) in try await request.decodeLayerPatch().enumerated() {
            guard operation.property == "suspended" else {
                throw APIError.invalid("\(index).property", "Only 'suspended' can be patched here, not '\(operation.property)'.")
            }
            guard operation.operation == .set, case .bool(let value)? = operation.value else {
                throw APIError.invalid("\(index).value", "'suspended' takes a set operation with a boolean value.")
            }
            suspended = value
        }
        if let suspended {
            try await endings.setSuspended(app: app, userID: user.identity.userID, suspended: suspended, logger: context.logger)
        }
        return Response(status: .accepted)
    }

    @Sendable func deleteSessions(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        try await endings.revoke(app: app, userID: user.identity.userID, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func challenge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        try await endings.challenge(app: app, userID: user.identity.userID, logger: context.logger)
        return Response(status: .noContent)
    }

    private func existingUser(_ context: LayerRequestContext) async throws -> (UUID, UserRecord) {
        let app = try context.parameters.layerID("app", as: .apps).uuid
        let userID = try context.parameters.appUserID("user")
        guard let user = try await sessions.user(app: app, userID: userID, logger: context.logger) else {
            throw APIError.notFound("The user '\(userID)'")
        }
        return (app, user)
    }
}

/// The app settings a Server API `PATCH /apps/<app>` may change.
struct AppSettingsPatch {
    static let sessionTTLRange = 30...31_536_000

    var sessionTTLSeconds: Int?
    var requireCertified: Bool?

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
            case ("session_ttl_in_seconds", _), ("require_certified_connections", _):
                throw APIError.invalid(operation.property, "'\(operation.property)' has a value of the wrong type.")
            default:
                throw APIError.invalid("\(index).property", "'\(operation.property)' is not an app setting.")
            }
        }
    }
}
