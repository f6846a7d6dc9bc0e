import Foundation
import LayerModels
import LayerServer
import Logging

/// How the parties' devices hear of a call: `signal` packets through the sync service's push,
/// `{"type": "call.<state>", "call": <the call>}`, to the devices of both parties. A ring is also
/// kept for the devices that connect while it rings; any later signal of the call clears it.
struct CallSignals: Sendable {
    let sync: InternalClient

    /// Rings every device of the callee, and shows the outgoing call on the caller's devices; the
    /// devices each of them has connected.
    @discardableResult
    func ring(_ call: Call, logger: Logger) async throws -> [String: Int] {
        let seconds = max(1, min(3600, Int(call.ringDeadline.timeIntervalSinceNow.rounded(.up))))
        return try await send(call, to: [call.caller, call.callee], replaySeconds: seconds, logger: logger).users ?? [:]
    }

    /// Tells both parties' devices where the call is now (answered: the caller gets the callee's
    /// token and candidates, and the callee's other devices stop ringing).
    func changed(_ call: Call, logger: Logger) async throws {
        _ = try await send(call, to: [call.caller, call.callee], replaySeconds: 0, logger: logger)
    }

    /// The devices `user` has connected now.
    func devices(app: UUID, users: [String], logger: Logger) async throws -> [String: Int] {
        try await sync.post(
            InternalAPI.devicesPath, body: InternalAPI.UsersRequest(appID: app, userIDs: users),
            as: InternalAPI.DevicesResponse.self, idempotent: true, logger: logger
        ).devices
    }

    private func send(
        _ call: Call, to users: [String], replaySeconds: Int, logger: Logger
    ) async throws -> InternalAPI.SignalResponse {
        let signal: JSONValue = ["type": .string("call.\(call.state.rawValue)"), "call": call.json]
        let request = InternalAPI.SignalRequest(
            appID: call.app, userIDs: users, signal: signal, replayKey: "call:\(call.id.lowercased)",
            replaySeconds: replaySeconds)
        // Idempotent: a device that gets a signal twice sees the same call in the same state.
        return try await sync.post(
            InternalAPI.signalsPath, body: request, as: InternalAPI.SignalResponse.self, idempotent: true, logger: logger)
    }
}
