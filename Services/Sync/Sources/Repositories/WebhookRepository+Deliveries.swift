import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// One event on its way to one webhook.
struct WebhookDelivery: Sendable {
    var id: Int64
    var webhookID: UUID
    var appID: UUID
    var kind: String
    /// The conversation or channel.
    var conversationID: UUID
    var messageID: UUID?
    var actorID: String?
    /// A system sender's name (the Server API's `sender.name`).
    var actorName: String?
    /// What the resource was at the event, where it may change before the delivery (a
    /// conversation's `metadata`).
    var data: JSONValue?
    var occurredAt: Date
    /// The same on every attempt, and the event's id.
    var requestID: UUID
    var attempts: Int
    var firstFailedAt: Date?

    static let columns = """
        id, webhook_id, app_id, kind, conversation_id, message_id, actor_id, actor_name, data::text, occurred_at,
        request_id, attempts, first_failed_at
        """

    init(row: PostgresRow) throws {
        let (id, webhook, app, kind, conversation, message, actor, actorName, data, occurred, request, attempts, failed) =
            try row.decode((Int64, UUID, UUID, String, UUID, UUID?, String?, String?, String?, Date, UUID, Int, Date?).self)
        self.id = id
        webhookID = webhook
        appID = app
        self.kind = kind
        conversationID = conversation
        messageID = message
        actorID = actor
        self.actorName = actorName
        self.data = data.flatMap(JSONValue.init(jsonText:))
        occurredAt = occurred
        requestID = request
        self.attempts = attempts
        firstFailedAt = failed
    }
}

/// The webhooks' outbox (`sync.webhook_deliveries`).
extension WebhookRepository {
    /// Takes up to `limit` deliveries that are due, of active webhooks, each the oldest undelivered
    /// one of its webhook and conversation (so that a conversation's events arrive in order), and
    /// leases each for its webhook's timeout and a few seconds, so that no other replica takes it
    /// meanwhile, and a replica that stopped halfway holds it up no longer than that. The oldest
    /// events are found by skipping from one conversation to the next down the order index, so
    /// the cost grows with the conversations waiting, not with the events.
    func dueDeliveries(limit: Int, logger: Logger) async throws -> [WebhookDelivery] {
        let rows = try await write(
            """
            WITH RECURSIVE heads (webhook_id, conversation_id, id) AS (
                (SELECT webhook_id, conversation_id, id FROM sync.webhook_deliveries WHERE delivered_at IS NULL
                 ORDER BY webhook_id, conversation_id, id LIMIT 1)
                UNION ALL
                SELECT next.* FROM heads h, LATERAL (
                    SELECT d.webhook_id, d.conversation_id, d.id FROM sync.webhook_deliveries d
                    WHERE d.delivered_at IS NULL AND (d.webhook_id, d.conversation_id) > (h.webhook_id, h.conversation_id)
                    ORDER BY d.webhook_id, d.conversation_id, d.id LIMIT 1) next
            )
            UPDATE sync.webhook_deliveries SET next_attempt_at = now() + (
                SELECT (w.timeout_ms + 5000) * interval '1 millisecond' FROM sync.webhooks w WHERE w.id = webhook_id)
            WHERE id IN (
                SELECT d.id FROM heads h JOIN sync.webhook_deliveries d ON d.id = h.id
                JOIN sync.webhooks w ON w.id = d.webhook_id AND w.status = 'active'
                WHERE d.next_attempt_at <= now() AND d.delivered_at IS NULL
                ORDER BY d.id LIMIT \(limit) FOR UPDATE OF d SKIP LOCKED)
            RETURNING \(unescaped: WebhookDelivery.columns)
            """, logger: logger)
        return try rows.map(WebhookDelivery.init(row:))
    }

    func webhooks(ids: [UUID], logger: Logger) async throws -> [UUID: WebhookRecord] {
        let rows = try await postgres.query(
            "SELECT \(unescaped: WebhookRecord.columns) FROM sync.webhooks WHERE id = ANY(\(ids))", logger: logger)
        var found: [UUID: WebhookRecord] = [:]
        for try await row in rows {
            let record = try WebhookRecord(row: row)
            found[record.id] = record
        }
        return found
    }

    /// What one attempt came to: the receiver's status and how long it took.
    struct Attempt: Sendable {
        var delivery: WebhookDelivery
        var status: Int?
        var latency: Duration
    }

    /// The receiver took `attempts` (of one webhook and conversation, in order); and, with `next`
    /// up to `next` more events of that conversation that follow them, due and in order, leased
    /// like ``dueDeliveries(limit:logger:)`` leases them (none when the webhook is no longer
    /// active). One statement for a whole batch.
    func delivered(_ attempts: [Attempt], next: Int, logger: Logger) async throws -> [WebhookDelivery] {
        guard let last = attempts.last?.delivery else { return [] }
        let rows = try await write(
            """
            WITH done AS (
                UPDATE sync.webhook_deliveries d SET delivered_at = now(), attempts = d.attempts + 1, last_status = u.status,
                    last_error = NULL, last_latency_ms = u.latency
                FROM unnest(\(attempts.map(\.delivery.id)), \(attempts.map { $0.status ?? 200 }),
                    \(attempts.map { Self.milliseconds($0.latency) })) AS u (id, status, latency)
                WHERE d.id = u.id RETURNING d.id
            ),
            following AS (
                SELECT d.id, d.next_attempt_at <= now() AS due FROM sync.webhook_deliveries d
                WHERE d.webhook_id = \(last.webhookID) AND d.conversation_id = \(last.conversationID)
                  AND d.delivered_at IS NULL AND d.id > \(last.id)
                  AND EXISTS (SELECT 1 FROM sync.webhooks w WHERE w.id = d.webhook_id AND w.status = 'active')
                ORDER BY d.id LIMIT \(next)
            )
            UPDATE sync.webhook_deliveries SET next_attempt_at = now() + (
                SELECT (w.timeout_ms + 5000) * interval '1 millisecond' FROM sync.webhooks w WHERE w.id = webhook_id)
            WHERE id IN (
                SELECT f.id FROM following f
                WHERE f.id < coalesce((SELECT min(g.id) FROM following g WHERE NOT g.due), 9223372036854775807))
            RETURNING \(unescaped: WebhookDelivery.columns)
            """, logger: logger)
        return try rows.map(WebhookDelivery.init(row:)).sorted { $0.id < $1.id }
    }

    /// The attempt failed: tried again at `retryAt`; or, once the webhook's deliveries have failed
    /// for `window`, the webhook turns inactive with the reason (its undelivered events are kept).
    /// The events of its batch that were to follow it are let go, due at once (they wait behind it).
    func failed(
        _ delivery: WebhookDelivery, status: Int?, error: String, latency: Duration, retryAt: Date, window: Duration,
        releasing rest: [Int64], logger: Logger
    ) async throws {
        try await write(logger: logger) { connection in
            if !rest.isEmpty {
                try await connection.query(
                    "UPDATE sync.webhook_deliveries SET next_attempt_at = now() WHERE id = ANY(\(rest))", logger: logger)
            }
            let rows = try await connection.query(
                """
                UPDATE sync.webhook_deliveries SET attempts = attempts + 1, first_failed_at = coalesce(first_failed_at, now()),
                    next_attempt_at = \(retryAt), last_status = \(status), last_error = \(error),
                    last_latency_ms = \(Self.milliseconds(latency))
                WHERE id = \(delivery.id)
                RETURNING now() - first_failed_at >= \(Double(window.components.seconds)) * interval '1 second'
                """, logger: logger)
            var expired = false
            for try await value in rows.decode(Bool.self) { expired = value }
            guard expired else { return }
            try await connection.query(
                """
                UPDATE sync.webhooks SET status = 'inactive', updated_at = now(),
                    status_reason = \("Deliveries failed for \(Self.spoken(window)): \(error)")
                WHERE id = \(delivery.webhookID) AND status = 'active'
                """, logger: logger)
        }
    }

    /// The webhook's latest `limit` events, newest first, with how their delivery went.
    func deliveryLog(webhook: UUID, limit: Int, logger: Logger) async throws -> [WebhookDeliveryObject] {
        let rows = try await postgres.query(
            """
            SELECT request_id, kind, occurred_at, attempts, last_status, last_error, last_latency_ms, delivered_at,
                CASE WHEN delivered_at IS NULL THEN next_attempt_at END
            FROM sync.webhook_deliveries WHERE webhook_id = \(webhook)
            ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        var log: [WebhookDeliveryObject] = []
        for try await row in rows {
            let (id, kind, occurred, attempts, status, error, latency, delivered, next) = try row.decode(
                (UUID, String, Date, Int, Int?, String?, Int?, Date?, Date?).self)
            log.append(
                WebhookDeliveryObject(
                    eventID: id.lowercased, kind: kind, occurredAt: occurred, attempts: attempts, lastStatus: status,
                    lastError: error, latencyMS: latency, deliveredAt: delivered, nextAttemptAt: next))
        }
        return log
    }

    /// `30 minutes`, `45 seconds`.
    static func spoken(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds % 60 == 0 ? "\(seconds / 60) minutes" : "\(seconds) seconds"
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}
