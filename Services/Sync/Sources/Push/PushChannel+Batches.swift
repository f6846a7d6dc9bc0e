import Foundation
import LayerModels
import Logging
import PostgresNIO

extension PushChannel {
    /// Sends one ephemeral packet to many users, in as many notifications as their ids take
    /// (each within PostgreSQL's payload limit). False, and nothing sent, when the packet does
    /// not fit even with a single user.
    static func publish(
        _ packet: EphemeralPacket, app: UUID, manyUsers users: [String], postgres: PostgresClient, logger: Logger
    ) async throws -> Bool {
        let encoder = JSONEncoder()
        let empty = try encoder.encode(
            Signal(a: app, u: [], t: packet.type, e: packet.event, b: packet.body, l: packet.legacyBody)
        ).count
        // Each id costs its JSON string and a comma.
        let sizes = try users.map { try encoder.encode([$0]).count - 2 + 1 }
        guard empty + (sizes.max() ?? 0) <= maxPayload else { return false }
        var batch: [String] = []
        var size = empty
        for (user, cost) in zip(users, sizes) {
            if !batch.isEmpty, size + cost > maxPayload {
                _ = try await publish(packet, app: app, users: batch, postgres: postgres, logger: logger)
                batch = []
                size = empty
            }
            batch.append(user)
            size += cost
        }
        if !batch.isEmpty { _ = try await publish(packet, app: app, users: batch, postgres: postgres, logger: logger) }
        return true
    }
}
