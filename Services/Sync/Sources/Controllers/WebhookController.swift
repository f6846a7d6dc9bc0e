import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The webhooks API of the app's backend (`/apps/:app/webhooks…`, a Server API token): register,
/// list, read, activate, deactivate and delete. It speaks
/// `Accept: application/vnd.layer.webhooks+json; version=1.0|2.0|3.0`, and the Server API's
/// `application/vnd.layer+json` too.
struct WebhookController: Sendable {
    let domain: SyncDomain
    let appTokens: any AppTokenVerifier

    func addRoutes(to router: LimitedRoutes) {
        let webhooks = router.group("apps/:app/webhooks")
            .add(
                middleware: AcceptHeaderMiddleware(
                    versions: [.v1_0, .v2_0, .v3_0], mediaTypes: [APIVersion.webhooksMediaType, APIVersion.layerMediaType])
            )
            .add(middleware: AppTokenMiddleware(verifier: appTokens))
        webhooks.post(use: register)
        webhooks.get(use: list)
        webhooks.get(":webhook", use: get)
        webhooks.get(":webhook/deliveries", use: deliveries)
        webhooks.post(":webhook/activate", use: activate)
        webhooks.post(":webhook/deactivate", use: deactivate)
        webhooks.delete(":webhook", use: delete)
        // The operator's (and the app's) extensions: `layer admin webhooks pause|resume|replay`.
        webhooks.post(":webhook/pause", use: pause)
        webhooks.post(":webhook/resume", use: resume)
        webhooks.post(":webhook/replay", use: replay)
    }

    @Sendable func register(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let body = try await request.decodeJSON(JSONValue.self, limit: 64 * 1024)
        return try Response.json(try await domain.webhooks.register(body, scope), status: .created)
    }

    @Sendable func list(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.json(try await domain.webhooks.list(try domain.appScope(request, context)))
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.webhook(try webhookID(context, scope), scope))
    }

    /// The delivery log: the webhook's latest 100 events, newest first.
    @Sendable func deliveries(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.deliveries(try webhookID(context, scope), scope))
    }

    @Sendable func activate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.activate(try webhookID(context, scope), scope))
    }

    @Sendable func deactivate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.deactivate(try webhookID(context, scope), scope))
    }

    @Sendable func pause(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.pause(try webhookID(context, scope), scope))
    }

    @Sendable func resume(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.webhooks.resume(try webhookID(context, scope), scope))
    }

    /// `{"since": "<ISO-8601>"}` (optional): 202 with how many events go out again.
    @Sendable func replay(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try webhookID(context, scope)
        struct Body: Decodable { var since: Date? }
        let since = try await request.decodeOptionalJSON(Body.self, limit: 4096)?.since
        let count = try await domain.webhooks.replay(id, since: since, scope)
        return try Response.json(["events": JSONValue.number(Double(count))], status: .accepted)
    }

    @Sendable func delete(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        try await domain.webhooks.delete(try webhookID(context, scope), scope)
        return Response(status: .noContent)
    }

    /// The webhook of the path: its UUID, or its id `layer:///apps/<app>/webhooks/<uuid>` of this
    /// app; anything else is not found.
    private func webhookID(_ context: LayerRequestContext, _ scope: Scope) throws -> UUID {
        let text = context.parameters.decoded("webhook")
        let prefix = "layer:///apps/\(scope.app.lowercased)/webhooks/"
        let uuid = text.lowercased().hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : text
        guard let id = UUID(uuidString: uuid) else { throw APIError.notFound("The webhook") }
        return id
    }
}
