import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// `POST /internal/v1/signals`: other services (VoIP ringing every phone of a callee) push an
/// ephemeral signal to users' devices through every replica. The answer counts the devices
/// connected when it was sent. A signal may also be kept for a while and sent to devices as they
/// connect (`replay_key`, `replay_seconds`). `POST /internal/v1/devices` counts users' devices.
struct SignalsController {
    let push: Push

    /// Adds the route to the group of internal routes, which checks the internal token.
    func addRoutes(to internalRoutes: some RouterMethods<LayerRequestContext>) {
        internalRoutes.post("signals", use: signal)
        internalRoutes.post("devices", use: devices)
    }

    @Sendable func signal(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.SignalRequest.self, limit: 16 * 1024,
            allowedKeys: ["app_id", "user_ids", "signal", "replay_key", "replay_seconds"])
        let users = try Array(Set(body.userIDs.enumerated().map { try userID(named: .string($1), property: "user_ids.\($0)") }))
            .sorted()
        guard !users.isEmpty, users.count <= 1000 else {
            throw APIError.invalid("user_ids", "user_ids names 1 to 1000 users.")
        }
        guard case .object = body.signal else { throw APIError.invalid("signal", "signal is a JSON object.") }
        if let key = body.replayKey, key.isEmpty || key.utf8.count > 200 {
            throw APIError.invalid("replay_key", "replay_key is 1 to 200 bytes.")
        }
        if let seconds = body.replaySeconds, !(0...3600).contains(seconds) {
            throw APIError.invalid("replay_seconds", "replay_seconds is a whole number from 0 to 3600.")
        }
        if (body.replayKey == nil) != (body.replaySeconds == nil) {
            throw APIError.invalid(
                body.replayKey == nil ? "replay_key" : "replay_seconds", "replay_key and replay_seconds go together.")
        }
        let replay = body.replayKey.flatMap { key in body.replaySeconds.map { (key: key, seconds: $0) } }
        let perUser = try await push.signal(
            Packets.json(body.signal), app: body.appID, users: users, replay: replay, logger: context.logger)
        return try Response.json(InternalAPI.SignalResponse(devices: perUser.values.reduce(0, +), users: perUser))
    }

    /// `POST /internal/v1/devices`: how many devices each user has connected on any replica.
    @Sendable func devices(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(
            InternalAPI.UsersRequest.self, limit: 64 * 1024, allowedKeys: ["app_id", "user_ids"])
        let users = try Array(Set(body.userIDs.enumerated().map { try userID(named: .string($1), property: "user_ids.\($0)") }))
        guard !users.isEmpty, users.count <= 1000 else {
            throw APIError.invalid("user_ids", "user_ids names 1 to 1000 users.")
        }
        let devices = try await push.liveDevices(app: body.appID, users: users, logger: context.logger)
        return try Response.json(InternalAPI.DevicesResponse(devices: devices))
    }
}
