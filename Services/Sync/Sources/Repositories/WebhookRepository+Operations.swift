import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What an operator does to a webhook besides what its app does: pause and resume it, replay
/// events it was sent; and what keeps the outbox small and watched.
extension WebhookRepository {
    static let pausedReason = "Paused by the operator: its events are kept and delivered when it resumes."

    /// Stops deliveries to an active webhook while still recording its events: it reads as
    /// inactive, with the reason. Nil when there is no such webhook; 422 unless it is active.
    func pause(_ id: UUID, app: UUID, logger: Logger) async throws -> WebhookRecord? {
        try await changeStatus(
            id, app: app, pausing: true, when: "status = 'active'", otherwise: "Only an active webhook can be paused",
            logger: logger)
    }

    /// Delivers to a paused webhook again, starting with the events it missed, at once.
    func resume(_ id: UUID, app: UUID, logger: Logger) async throws -> WebhookRecord? {
        try await changeStatus(
            id, app: app, pausing: false, when: "paused", otherwise: "Only a paused webhook can be resumed", logger: logger)
    }

    private func changeStatus(
        _ id: UUID, app: UUID, pausing: Bool, when condition: String, otherwise: String, logger: Logger
    ) async throws -> WebhookRecord? {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE sync.webhooks SET status = \(pausing ? "inactive" : "active"), paused = \(pausing),
                    status_reason = \(pausing ? Self.pausedReason : nil), verify_after = NULL, updated_at = now()
                WHERE id = \(id) AND app_id = \(app) AND \(unescaped: condition)
                RETURNING \(unescaped: WebhookRecord.columns)
                """, logger: logger)
            for try await row in rows {
                try await connection.query(
                    """
                    UPDATE sync.webhook_deliveries SET first_failed_at = NULL, next_attempt_at = now()
                    WHERE webhook_id = \(id) AND delivered_at IS NULL
                    """, logger: logger)
                return try WebhookRecord(row: row)
            }
            let existing = try await connection.query(
                "SELECT status, paused FROM sync.webhooks WHERE id = \(id) AND app_id = \(app)", logger: logger)
            for try await (status, paused) in existing.decode((String, Bool).self) {
                throw APIError(.invalidOperation, "\(otherwise); this one is \(paused ? "paused" : status).")
            }
            return nil
        }
    }

    /// Delivers again, in their order, the kept events the webhook was sent since `since`; how many.
    /// Each keeps its id (`event.id` and `layer-webhook-request-id`): a receiver that remembers
    /// the ids it took recognises them.
    func replay(_ id: UUID, since: Date, logger: Logger) async throws -> Int {
        try await write(
            """
            UPDATE sync.webhook_deliveries SET delivered_at = NULL, attempts = 0, first_failed_at = NULL,
                next_attempt_at = now(), last_status = NULL, last_error = NULL, last_latency_ms = NULL
            WHERE webhook_id = \(id) AND delivered_at IS NOT NULL AND occurred_at >= \(since)
            RETURNING 1
            """, logger: logger
        ).count
    }

    /// Drops up to `limit` events older than their webhook keeps them; how many, and how many of
    /// them were never delivered.
    func prune(limit: Int, logger: Logger) async throws -> (removed: Int, undelivered: Int) {
        let rows = try await write(
            """
            DELETE FROM sync.webhook_deliveries WHERE id IN (
                SELECT d.id FROM sync.webhook_deliveries d JOIN sync.webhooks w ON w.id = d.webhook_id
                WHERE d.occurred_at < now() - (SELECT min(keep_s) FROM sync.webhooks) * interval '1 second'
                  AND d.occurred_at < now() - w.keep_s * interval '1 second'
                LIMIT \(limit) FOR UPDATE OF d SKIP LOCKED)
            RETURNING delivered_at IS NULL
            """, logger: logger)
        let undelivered = try rows.filter { try $0.decode(Bool.self) }.count
        return (rows.count, undelivered)
    }

    /// The shortest time any webhook keeps its events; nil with no webhook.
    func shortestKeep(logger: Logger) async throws -> Duration? {
        let rows = try await postgres.query("SELECT min(keep_s) FROM sync.webhooks", logger: logger)
        for try await seconds in rows.decode(Int32?.self) { return seconds.map { .seconds(Int($0)) } }
        return nil
    }

    /// How many events active webhooks wait for, and how long the oldest of them has waited.
    func backlog(logger: Logger) async throws -> (events: Int, oldest: Duration) {
        let rows = try await postgres.query(
            """
            SELECT count(*)::int, coalesce(extract(epoch FROM now() - min(d.occurred_at)), 0)::float8
            FROM sync.webhook_deliveries d JOIN sync.webhooks w ON w.id = d.webhook_id AND w.status = 'active'
            WHERE d.delivered_at IS NULL
            """, logger: logger)
        for try await (count, seconds) in rows.decode((Int, Double).self) {
            return (count, .milliseconds(Int(seconds * 1000)))
        }
        return (0, .zero)
    }

    /// When the earliest undelivered event of an active webhook is due; nil when none waits.
    func nextAttempt(logger: Logger) async throws -> Date? {
        let rows = try await postgres.query(
            """
            SELECT min(d.next_attempt_at)
            FROM sync.webhook_deliveries d JOIN sync.webhooks w ON w.id = d.webhook_id AND w.status = 'active'
            WHERE d.delivered_at IS NULL
            """, logger: logger)
        for try await due in rows.decode(Date?.self) { return due }
        return nil
    }
}
