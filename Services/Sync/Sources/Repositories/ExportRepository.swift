import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import PostgresNIO

/// An app's data exports: its RSA public key, its schedule, and each export as a job that a worker
/// of any replica claims, renews while it builds the archive and completes. A claim is a token
/// and a lease: a worker that stops renewing (a crash, a restart) loses the export to the next
/// one, and what it still writes under its old token is refused.
struct ExportRepository: PostgresRepository {
    let postgres: PostgresClient

    /// How long an export and its archive are kept after it was asked for.
    static let retention: TimeInterval = 7 * 24 * 3600
    /// How long a claim holds without being renewed.
    static let lease: TimeInterval = 30
    /// After this many claims that did not complete, an export is `failed`.
    static let maxAttempts = 3
    /// The largest row of `sync.export_chunks`.
    static let chunkSize = 1024 * 1024

    // MARK: The key

    func setPublicKey(app: UUID, pem: String, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.export_keys (app_id, public_key) VALUES (\(app), \(pem))
            ON CONFLICT (app_id) DO UPDATE SET public_key = excluded.public_key, updated_at = now()
            """, logger: logger)
    }

    func publicKey(app: UUID, logger: Logger) async throws -> String? {
        let rows = try await postgres.query("SELECT public_key FROM sync.export_keys WHERE app_id = \(app)", logger: logger)
        for try await key in rows.decode(String.self) { return key }
        return nil
    }

    // MARK: The schedule

    struct Schedule: Sendable {
        var interval: ExportInterval
        var events: [String]
        var nextExportAt: Date?
        var lastExportAt: Date?
        var lastExportID: UUID?
    }

    private static let scheduleColumns = "frequency, events, next_export_at, last_export_at, last_export_id"

    private static func schedule(_ row: PostgresRow) throws -> Schedule {
        let (frequency, events, next, last, lastID) = try row.decode((String, [String], Date?, Date?, UUID?).self)
        return Schedule(
            interval: ExportInterval(rawValue: frequency) ?? .disabled, events: events, nextExportAt: next, lastExportAt: last,
            lastExportID: lastID)
    }

    func schedule(app: UUID, logger: Logger) async throws -> Schedule? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: Self.scheduleColumns) FROM sync.export_schedules WHERE app_id = \(app)", logger: logger)
        for try await row in rows { return try Self.schedule(row) }
        return nil
    }

    /// Replaces the schedule. A daily schedule that was running keeps its next time; one that
    /// starts runs a day from now and covers what happens from now on.
    func setSchedule(app: UUID, interval: ExportInterval, events: [String], logger: Logger) async throws -> Schedule {
        let daily = interval == .daily
        let rows = try await write(
            """
            INSERT INTO sync.export_schedules AS s (app_id, frequency, events, next_export_at, covered_until)
            VALUES (\(app), \(interval.rawValue), \(events), CASE WHEN \(daily) THEN now() + interval '1 day' END, now())
            ON CONFLICT (app_id) DO UPDATE SET frequency = excluded.frequency, events = excluded.events, updated_at = now(),
                next_export_at = CASE WHEN NOT \(daily) THEN NULL
                    ELSE coalesce(s.next_export_at, excluded.next_export_at) END,
                covered_until = CASE WHEN s.next_export_at IS NULL THEN now() ELSE s.covered_until END
            RETURNING \(unescaped: Self.scheduleColumns)
            """, logger: logger)
        return try Self.schedule(rows[0])
    }

    // MARK: Exports

    enum CreateOutcome: Sendable {
        case created(ExportRecord)
        /// Another historical export of the app is waiting or running: this one.
        case running(ExportRecord)
    }

    /// Asks for an export of everything up to now, encrypted for the app's key; 422 without one.
    func createHistoricalExport(app: UUID, logger: Logger) async throws -> CreateOutcome {
        guard let key = try await publicKey(app: app, logger: logger) else {
            throw APIError(
                .invalidOperation, "Register an RSA public key with PUT /apps/<app>/export_security before asking for an export.",
                property: "public_key")
        }
        do {
            let rows = try await write(
                """
                INSERT INTO sync.exports (app_id, id, type, events, until, public_key, expires_at)
                VALUES (\(app), \(UUID()), 'historical', \(ExportEvent.allNames), now(), \(key),
                    now() + \(Self.retention) * interval '1 second')
                RETURNING \(unescaped: ExportRecord.columns)
                """, logger: logger)
            return .created(try ExportRecord(row: rows[0]))
        } catch let error as PSQLError where error.sqlState == "23505" {
            guard let running = try await runningHistoricalExport(app: app, logger: logger) else { throw error }
            return .running(running)
        }
    }

    private func runningHistoricalExport(app: UUID, logger: Logger) async throws -> ExportRecord? {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: ExportRecord.columns) FROM sync.exports
            WHERE app_id = \(app) AND type = 'historical' AND status IN ('pending', 'executing')
            """, logger: logger)
        for try await row in rows { return try ExportRecord(row: row) }
        return nil
    }

    func export(app: UUID, id: UUID, logger: Logger) async throws -> ExportRecord? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: ExportRecord.columns) FROM sync.exports WHERE app_id = \(app) AND id = \(id)", logger: logger)
        for try await row in rows { return try ExportRecord(row: row) }
        return nil
    }

    /// A page of the app's exports, newest first, after `fromID`; and how many there are.
    func exports(app: UUID, fromID: UUID?, pageSize: Int, logger: Logger) async throws -> (records: [ExportRecord], total: Int) {
        if let fromID, try await export(app: app, id: fromID, logger: logger) == nil {
            throw APIError.invalid("from_id", "from_id names no export of this app.")
        }
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: ExportRecord.columns) FROM sync.exports
            WHERE app_id = \(app) AND (\(fromID)::uuid IS NULL
                OR (created_at, id) < (SELECT created_at, id FROM sync.exports WHERE id = \(fromID)))
            ORDER BY created_at DESC, id DESC LIMIT \(Int64(pageSize))
            """, logger: logger)
        var records: [ExportRecord] = []
        for try await row in rows { records.append(try ExportRecord(row: row)) }
        let counted = try await postgres.query("SELECT count(*) FROM sync.exports WHERE app_id = \(app)", logger: logger)
        var total = 0
        for try await count in counted.decode(Int64.self) { total = Int(count) }
        return (records, total)
    }

    /// Deletes an export and its archive (a worker building it stops at its next write).
    func deleteExport(app: UUID, id: UUID, logger: Logger) async throws -> Bool {
        try await write("DELETE FROM sync.exports WHERE app_id = \(app) AND id = \(id) RETURNING id", logger: logger).count == 1
    }

    /// One stored row of a completed archive, or nil past its end.
    func chunk(export id: UUID, ordinal: Int32, logger: Logger) async throws -> ByteBuffer? {
        let rows = try await postgres.query(
            "SELECT data FROM sync.export_chunks WHERE export_id = \(id) AND ordinal = \(ordinal)", logger: logger)
        for try await data in rows.decode(ByteBuffer.self) { return data }
        return nil
    }
}

/// How often an app's data is exported on its own.
enum ExportInterval: String, Sendable {
    case daily, disabled
}

/// A row of `sync.exports`.
struct ExportRecord: Sendable {
    enum Status: String, Sendable {
        case pending, executing, completed, failed
    }

    var id: UUID
    var type: String
    var status: Status
    var events: [String]
    var since: Date?
    var until: Date
    var publicKey: String
    var encryptedAESKey: String?
    var aesIV: String?
    var size: Int64?
    var eventCount: Int64?
    var error: String?
    var createdAt: Date
    var startedAt: Date?
    var completedAt: Date?
    var expiresAt: Date

    static let columns = """
        id, type, status, events, since, until, public_key, encrypted_aes_key, aes_iv, size, event_count, error,
        created_at, started_at, completed_at, expires_at
        """

    /// The record from the row's columns from `offset` on.
    init(row: PostgresRow, offset: Int = 0) throws {
        let row = row.makeRandomAccess()
        func cell(_ index: Int) -> PostgresCell { row[offset + index] }
        id = try cell(0).decode(UUID.self)
        type = try cell(1).decode(String.self)
        status = Status(rawValue: try cell(2).decode(String.self)) ?? .failed
        events = try cell(3).decode([String].self)
        since = try cell(4).decode(Date?.self)
        until = try cell(5).decode(Date.self)
        publicKey = try cell(6).decode(String.self)
        encryptedAESKey = try cell(7).decode(String?.self)
        aesIV = try cell(8).decode(String?.self)
        size = try cell(9).decode(Int64?.self)
        eventCount = try cell(10).decode(Int64?.self)
        error = try cell(11).decode(String?.self)
        createdAt = try cell(12).decode(Date.self)
        startedAt = try cell(13).decode(Date?.self)
        completedAt = try cell(14).decode(Date?.self)
        expiresAt = try cell(15).decode(Date.self)
    }
}

extension SyncRepositories {
    var exports: ExportRepository { ExportRepository(postgres: postgres) }
}
