import Foundation
import LayerServer
import Logging
import PostgresNIO

/// The replicas serving push connections, the devices connected to each, and presence. A replica
/// that stops refreshing its row is presumed dead, and its devices with it.
struct DeviceRepository: PostgresRepository {
    let postgres: PostgresClient

    /// `seen_at` older than this means the replica is gone.
    static let replicaLifetime: Duration = .seconds(30)

    /// Inserts or refreshes this replica's row; true when it had to be inserted (at start, or
    /// after others took this replica for dead and dropped its devices).
    @discardableResult
    func registerReplica(_ id: UUID, logger: Logger) async throws -> Bool {
        let rows = try await write(
            """
            INSERT INTO sync.replicas AS r (id) VALUES (\(id))
            ON CONFLICT (id) DO UPDATE SET seen_at = now()
            RETURNING r.xmax = 0
            """, logger: logger)
        for inserted in try rows.decode(Bool.self) { return inserted }
        return true
    }

    /// Refreshes this replica (re-recording `devices` if its row was gone) and forgets the
    /// replicas that stopped refreshing theirs.
    func refreshReplica(_ id: UUID, devices: @autoclosure () -> [PushDevice], logger: Logger) async throws {
        let lifetime = "\(Self.replicaLifetime.components.seconds) seconds"
        if try await registerReplica(id, logger: logger) {
            for device in devices() { _ = try await addDevice(device, replica: id, logger: logger) }
        }
        try await write(
            "DELETE FROM sync.replicas WHERE seen_at < now() - \(lifetime)::interval", logger: logger)
    }

    func removeReplica(_ id: UUID, logger: Logger) async throws {
        try await write("DELETE FROM sync.replicas WHERE id = \(id)", logger: logger)
    }

    /// Records a connected device; returns how many WebSocket devices the user now has.
    func addDevice(_ device: PushDevice, replica: UUID, logger: Logger) async throws -> Int {
        try await write(
            """
            INSERT INTO sync.devices (replica_id, id, app_id, user_id, kind, session_ref)
            VALUES (\(replica), \(device.id), \(device.key.app), \(device.key.user), \(device.kind.rawValue),
                    \(device.sessionReference))
            """, logger: logger)
        return try await liveDevices(app: device.key.app, users: [device.key.user], kind: .webSocket, logger: logger)
            .values.reduce(0, +)
    }

    /// Forgets a device; returns how many WebSocket devices the user still has.
    func removeDevice(_ device: PushDevice, replica: UUID, logger: Logger) async throws -> Int {
        try await write(
            "DELETE FROM sync.devices WHERE replica_id = \(replica) AND id = \(device.id)", logger: logger)
        return try await liveDevices(app: device.key.app, users: [device.key.user], kind: .webSocket, logger: logger)
            .values.reduce(0, +)
    }

    /// How many devices (of one kind, or all) each of these users has connected to live
    /// replicas; users with none are absent.
    func liveDevices(
        app: UUID, users: [String], kind: PushDevice.Kind? = nil, logger: Logger
    ) async throws -> [String: Int] {
        let lifetime = "\(Self.replicaLifetime.components.seconds) seconds"
        let rows = try await postgres.query(
            """
            SELECT d.user_id, count(*) FROM sync.devices d JOIN sync.replicas r ON r.id = d.replica_id
            WHERE d.app_id = \(app) AND d.user_id = ANY(\(users)) AND r.seen_at >= now() - \(lifetime)::interval
              AND (\(kind?.rawValue)::text IS NULL OR d.kind = \(kind?.rawValue))
            GROUP BY d.user_id
            """, logger: logger)
        var counts: [String: Int] = [:]
        for try await (user, count) in rows.decode((String, Int64).self) { counts[user] = Int(count) }
        return counts
    }

    /// The current participants of a conversation of `app`.
    func currentParticipants(
        app: UUID, conversation: UUID, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [String] {
        let rows = try await connection.query(
            """
            SELECT user_id FROM sync.participants
            WHERE app_id = \(app) AND conversation_id = \(conversation) AND left_position IS NULL
            """, logger: logger)
        var users: [String] = []
        for try await user in rows.decode(String.self) { users.append(user) }
        return users
    }

    /// The status a user chose last (nil: never chose) and when it was last set or refreshed.
    func chosenPresence(app: UUID, users: [String], logger: Logger) async throws -> [String: (status: String, seen: Date)] {
        let rows = try await postgres.query(
            "SELECT user_id, status, last_seen_at FROM sync.presence WHERE app_id = \(app) AND user_id = ANY(\(users))",
            logger: logger)
        var result: [String: (status: String, seen: Date)] = [:]
        for try await (user, status, seen) in rows.decode((String, String, Date).self) { result[user] = (status, seen) }
        return result
    }

    /// Sets (or, with nil, refreshes) the status a user chose; returns it and its time.
    func choosePresence(app: UUID, user: String, status: String?, logger: Logger) async throws -> (status: String, seen: Date) {
        let rows = try await write(
            """
            INSERT INTO sync.presence AS p (app_id, user_id, status) VALUES (\(app), \(user), coalesce(\(status), 'available'))
            ON CONFLICT (app_id, user_id) DO UPDATE SET status = coalesce(\(status), p.status), last_seen_at = now()
            RETURNING status, last_seen_at
            """, logger: logger)
        for row in rows { return try row.decode((String, Date).self) }
        return (status ?? "available", Date())
    }

    /// Keeps `signal` for these users under `key` until `seconds` from now (replacing what was
    /// kept under it), or with 0 seconds forgets it.
    func keepSignal(app: UUID, users: [String], key: String, signal: String, seconds: Int, logger: Logger) async throws {
        if seconds == 0 {
            try await write(
                "DELETE FROM sync.replayed_signals WHERE app_id = \(app) AND user_id = ANY(\(users)) AND key = \(key)",
                logger: logger)
            return
        }
        try await write(
            """
            INSERT INTO sync.replayed_signals (app_id, user_id, key, signal, until)
            SELECT \(app), u, \(key), \(signal), now() + make_interval(secs => \(seconds)) FROM unnest(\(users)::text[]) AS u
            ON CONFLICT (app_id, user_id, key) DO UPDATE SET signal = excluded.signal, until = excluded.until
            """, logger: logger)
    }

    /// The signals kept for a user that have not run out, oldest first.
    func keptSignals(app: UUID, user: String, logger: Logger) async throws -> [String] {
        let rows = try await postgres.query(
            """
            SELECT signal FROM sync.replayed_signals WHERE app_id = \(app) AND user_id = \(user) AND until > now()
            ORDER BY until, key
            """, logger: logger)
        var signals: [String] = []
        for try await signal in rows.decode(String.self) { signals.append(signal) }
        return signals
    }

    /// Forgets the kept signals that ran out.
    func dropExpiredSignals(logger: Logger) async throws {
        try await write("DELETE FROM sync.replayed_signals WHERE until <= now()", logger: logger)
    }
}
