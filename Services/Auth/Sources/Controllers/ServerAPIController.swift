import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The auth part of the Server API (an app's own backend, with a Server API token): the app's
/// session settings and allowed web origins. The user resource (`/apps/<app>/users/<user>…`) is
/// the sync service's; it asks this service about sessions and suspension
/// (``InternalController``).
struct ServerAPIController: Sendable {
    let apps: AppRepository
    let origins: AllowedOrigins

    func addRoutes(to router: LimitedRoutes) {
        router.group("apps/:app")
            .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.serverAPI))
            .add(middleware: AppTokenMiddleware(verifier: apps))
            .patch(use: updateApp)
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
