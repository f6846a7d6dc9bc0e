import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Push tokens (`POST /push_tokens`, `DELETE /push_tokens/:device_id`): a device that cannot keep a
/// socket open (an app in the background) registers the token APNs or FCM gave it, and hears of
/// new messages through it while it is not connected. Both answer 202 with no body, as the
/// original API did.
struct PushTokenController {
    let domain: SyncDomain

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("push_tokens", use: register)
        router.delete("push_tokens/:device", use: unregister)
    }

    @Sendable func register(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let body = try await request.decodeJSON(
            PushNotifications.TokenBody.self, limit: 16 * 1024, allowedKeys: PushNotifications.TokenBody.keys)
        // The session that registers it: while a device is connected with it, it gets no push.
        var session: String?
        if case .sessionToken(let token) = LayerAuthorization(request: request, allowsQueryToken: false) {
            session = PushDevice.sessionReference(of: token)
        }
        try await domain.pushNotifications.register(body, session: session, scope)
        return Response(status: .accepted)
    }

    @Sendable func unregister(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let device = try context.parameters.require("device")
        try await domain.pushNotifications.unregister(device: device, scope)
        return Response(status: .accepted)
    }
}
