import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The apps' push providers in the operator's API: `GET /admin/apps/:app/push`,
/// `PUT /admin/apps/:app/push/apns|fcm` (the credentials) and `DELETE …/push/apns|fcm`. The sync
/// service owns them (it sends the pushes, and seals the keys); this door checks the operator and
/// the app, and relays the request.
extension AdminController {
    func addPushRoutes(to admin: some RouterMethods<LayerRequestContext>) {
        admin.get("apps/:app/push", use: showPush)
        admin.put("apps/:app/push/:provider", use: setPush)
        admin.delete("apps/:app/push/:provider", use: removePush)
    }

    @Sendable func showPush(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        return try Response.json(try await relay(.init(appID: app.id, action: .show), context))
    }

    @Sendable func setPush(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        let provider = try pushProvider(context)
        // A service account's key file runs to a few kilobytes.
        let credentials = try await request.decodeJSON(JSONValue.self, limit: 64 * 1024)
        let answer = try await relay(.init(appID: app.id, action: .set, provider: provider, credentials: credentials), context)
        return try Response.json(answer[provider] ?? .null)
    }

    @Sendable func removePush(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try await app(context)
        _ = try await relay(.init(appID: app.id, action: .remove, provider: try pushProvider(context)), context)
        return Response(status: .noContent)
    }

    private func pushProvider(_ context: LayerRequestContext) throws -> String {
        let name = try context.parameters.require("provider")
        guard ["apns", "fcm"].contains(name) else { throw APIError.notFound("The push provider \(name)") }
        return name
    }

    private func relay(_ request: InternalAPI.PushProvidersRequest, _ context: LayerRequestContext) async throws -> JSONValue {
        try await sync.post(
            InternalAPI.pushProvidersPath, body: request, as: JSONValue.self, idempotent: true, logger: context.logger)
    }
}
