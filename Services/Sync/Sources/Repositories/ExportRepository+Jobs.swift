import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import PostgresNIO

/// The work on exports, as the worker of each replica does it.
extension ExportRepository {
    /// An export claimed by a worker, with the token its writes must carry.
    struct Claimed: Sendable {
        var record: ExportRecord
        var appID: UUID
        var token: UUID
        var attempt: Int
    }

    /// Whether an export waits to be claimed and whether a schedule is due: one cheap read, so
    /// that an idle worker opens no transaction.
    func pendingWork(logger: Logger) async throws -> (exports: Bool, schedules: Bool) {
        let rows = try await postgres.query(
            """
            SELECT
                EXISTS (SELECT 1 FROM sync.exports WHERE status IN ('pending', 'executing')
                    AND (status = 'pending' OR lease_until < now()) AND attempts < \(Int32(Self.maxAttempts))),
                EXISTS (SELECT 1 FROM sync.export_schedules WHERE next_export_at <= now())
            """, logger: logger)
        for try await (exports, schedules) in rows.decode((Bool, Bool).self) { return (exports, schedules) }
        return (false, false)
    }

    /// Takes the oldest export that waits, or whose worker's lease ran out; nil when there is none.
    /// Replicas skip what another one is claiming at this instant.
    func claim(logger: Logger) async throws -> Claimed? {
        let token = UUID()
        let rows = try await write(
            """
            UPDATE sync.exports e SET status = 'executing', started_at = coalesce(e.started_at, now()), claim = \(token),
                lease_until = now() + \(Self.lease) * interval '1 second', attempts = e.attempts + 1
            WHERE e.id = (
                SELECT id FROM sync.exports
                WHERE (status = 'pending' OR (status = 'executing' AND lease_until < now()))
                    AND attempts < \(Int32(Self.maxAttempts))
                ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING e.app_id, e.attempts, \(unescaped: ExportRecord.columns)
            """, logger: logger)
        guard let row = rows.first else { return nil }
        let (app, attempts) = try row.decode((UUID, Int32).self)
        // The same row again, past its first two columns.
        let record = try ExportRecord(row: row, offset: 2)
        return Claimed(record: record, appID: app, token: token, attempt: Int(attempts))
    }

    /// Extends the claim's lease; false once the export is no longer this claim's (taken over or deleted).
    func renew(_ claim: Claimed, logger: Logger) async throws -> Bool {
        try await write(
            """
            UPDATE sync.exports SET lease_until = now() + \(Self.lease) * interval '1 second'
            WHERE id = \(claim.record.id) AND claim = \(claim.token) AND status = 'executing' RETURNING id
            """, logger: logger
        ).count == 1
    }

    /// Drops what an earlier attempt stored.
    func clearChunks(_ claim: Claimed, logger: Logger) async throws {
        try await write("DELETE FROM sync.export_chunks WHERE export_id = \(claim.record.id)", logger: logger)
    }

    /// Stores one row of the archive; false (nothing stored) once the export is no longer this
    /// claim's. The row lock keeps a takeover from slipping in between the check and the write.
    func storeChunk(_ claim: Claimed, ordinal: Int32, data: ByteBuffer, logger: Logger) async throws -> Bool {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT 1 FROM sync.exports WHERE id = \(claim.record.id) AND claim = \(claim.token) AND status = 'executing'
                FOR SHARE
                """, logger: logger)
            var owned = false
            for try await _ in rows { owned = true }
            guard owned else { return false }
            try await connection.query(
                """
                INSERT INTO sync.export_chunks (app_id, export_id, ordinal, data)
                VALUES (\(claim.appID), \(claim.record.id), \(ordinal), \(data))
                """,
                logger: logger)
            return true
        }
    }

    /// The archive is complete: its key and IV are recorded and it can be downloaded.
    func complete(
        _ claim: Claimed, encryptedKey: String, iv: String, size: Int64, eventCount: Int64, logger: Logger
    ) async throws -> Bool {
        try await write(
            """
            UPDATE sync.exports SET status = 'completed', completed_at = now(), encrypted_aes_key = \(encryptedKey),
                aes_iv = \(iv), size = \(size), event_count = \(eventCount), claim = NULL, lease_until = NULL, error = NULL
            WHERE id = \(claim.record.id) AND claim = \(claim.token) RETURNING id
            """, logger: logger
        ).count == 1
    }

    /// The worker stops (its replica shuts down): the export waits again, at once rather than once
    /// the lease has run out, and the attempt does not count.
    func handBack(_ claim: Claimed, logger: Logger) async throws {
        try await write(
            """
            UPDATE sync.exports SET status = 'pending', claim = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
            WHERE id = \(claim.record.id) AND claim = \(claim.token) AND status = 'executing'
            """, logger: logger)
    }

    /// The attempt failed: the export waits for another one, or fails for good after the last.
    func release(_ claim: Claimed, error: String, logger: Logger) async throws {
        try await write(
            """
            UPDATE sync.exports SET claim = NULL, lease_until = NULL, error = \(error),
                status = CASE WHEN attempts >= \(Int32(Self.maxAttempts)) THEN 'failed' ELSE 'pending' END
            WHERE id = \(claim.record.id) AND claim = \(claim.token)
            """, logger: logger)
    }

    /// Turns each daily schedule that is due into a scheduled export of what happened since the
    /// last one; returns how many it made. An app without a key skips its turn.
    func startDueSchedules(logger: Logger) async throws -> Int {
        var started = 0
        while true {
            let made = try await write(logger: logger) { connection -> Bool? in
                let due = try await connection.query(
                    """
                    SELECT s.app_id, s.events, s.covered_until, k.public_key FROM sync.export_schedules s
                    LEFT JOIN sync.export_keys k ON k.app_id = s.app_id
                    WHERE s.next_export_at <= now() ORDER BY s.next_export_at LIMIT 1 FOR UPDATE OF s SKIP LOCKED
                    """, logger: logger)
                var found: (UUID, [String], Date, String?)?
                for try await row in due.decode((UUID, [String], Date, String?).self) { found = row }
                guard let (app, events, since, key) = found else { return nil }
                let id = UUID()
                if let key {
                    try await connection.query(
                        """
                        INSERT INTO sync.exports (app_id, id, type, events, since, until, public_key, expires_at)
                        VALUES (\(app), \(id), 'scheduled', \(events), \(since), now(), \(key),
                            now() + \(Self.retention) * interval '1 second')
                        """, logger: logger)
                }
                try await connection.query(
                    """
                    UPDATE sync.export_schedules SET
                        next_export_at = greatest(next_export_at + interval '1 day', now() + interval '1 hour'),
                        last_export_at = CASE WHEN \(key != nil) THEN now() ELSE last_export_at END,
                        last_export_id = CASE WHEN \(key != nil) THEN \(id) ELSE last_export_id END,
                        covered_until = CASE WHEN \(key != nil) THEN now() ELSE covered_until END
                    WHERE app_id = \(app)
                    """, logger: logger)
                return key != nil
            }
            guard let made else { return started }
            if made { started += 1 }
        }
    }

    /// Exports whose last attempt stopped without a word (its replica gone) fail for good.
    func failAbandoned(logger: Logger) async throws {
        let reason = "The export stopped \(Self.maxAttempts) times before it completed."
        try await write(
            """
            UPDATE sync.exports SET status = 'failed', claim = NULL, lease_until = NULL,
                error = coalesce(error, \(reason))
            WHERE status = 'executing' AND lease_until < now() AND attempts >= \(Int32(Self.maxAttempts))
            """, logger: logger)
    }

    /// Deletes exports (and their archives) whose time is up; returns how many.
    func pruneExpired(logger: Logger) async throws -> Int {
        try await write(
            """
            DELETE FROM sync.exports WHERE id IN (
                SELECT id FROM sync.exports WHERE expires_at < now() LIMIT 100 FOR UPDATE SKIP LOCKED)
            RETURNING id
            """, logger: logger
        ).count
    }
}
