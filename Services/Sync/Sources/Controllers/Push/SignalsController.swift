import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// `POST /internal/v1/signals`: other services (VoIP ringing every phone of a callee) push an
/// ephemeral signal to users' devices through every replica. The answer counts the devices
/// connected when it was sent.
struct SignalsController {
    let push: Push

    /// Adds the route to the group of internal routes, which checks the internal token.
    func addRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("signals", use: signal)
    }

    @Sendable func signal(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.SignalRequest.self, limit: 16 * 1024, allowedKeys: ["app_id", "user_ids", "signal"])
        let users = try Array(Set(body.userIDs.enumerated().map { try userID(named: .string($1), property: "user_ids.\($0)") }))
            .sorted()
        guard !users.isEmpty, users.count <= 1000 else {
            throw APIError.invalid("user_ids", "user_ids names 1 to 1000 users.")
        }
        guard case .object = body.signal else { throw APIError.invalid("signal", "signal is a JSON object.") }
        let packet = EphemeralPacket(type: "signal", body: Packets.json(body.signal), event: "signal")
        let devices = try await push.repositories.devices.liveDevices(app: body.appID, users: users, logger: context.logger)
            .values.reduce(0, +)
        guard
            try await PushChannel.publish(packet, app: body.appID, users: users, postgres: push.postgres, logger: context.logger)
        else {
            throw APIError.invalid("signal", "The signal and its users must fit in \(PushChannel.maxPayload) bytes.")
        }
        return try Response.json(InternalAPI.SignalResponse(devices: devices))
    }
}
