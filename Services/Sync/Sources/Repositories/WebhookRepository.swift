import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// A webhook as stored; its secret stays sealed here (``SealedSecrets``).
struct WebhookRecord: Sendable {
    enum Status: String, Sendable { case unverified, active, inactive }

    var id: UUID
    var appID: UUID
    var version: String
    var targetURL: String
    var events: [String]
    var sealedSecret: Data
    var config: [String: String]?
    var status: Status
    var statusReason: String?
    /// Which verification the webhook waits for (see `sync.webhooks.verification`).
    var verification: Int64
    var createdAt: Date
    /// How long its receiver has to answer a delivery.
    var timeout: Duration
    /// How long its deliveries may fail before it turns inactive.
    var retryWindow: Duration
    /// Paused by the operator: inactive, still recording events.
    var paused: Bool
    /// Whether it may call loopback and private addresses.
    var privateTargets: Bool

    static let columns = """
        id, app_id, version, target_url, events, secret, config::text, status, status_reason, verification, created_at,
        timeout_ms, retry_window_s, paused, private_targets
        """

    init(row: PostgresRow) throws {
        let (
            id, app, version, target, events, secret, config, status, reason, verification, created, timeout, window, paused,
            privateTargets
        ) = try row.decode(
            (UUID, UUID, String, String, [String], ByteBuffer, String?, String, String?, Int64, Date, Int32, Int32, Bool, Bool)
                .self)
        self.paused = paused
        self.privateTargets = privateTargets
        self.timeout = .milliseconds(Int(timeout))
        retryWindow = .seconds(Int(window))
        self.id = id
        appID = app
        self.version = version
        targetURL = target
        self.events = events
        sealedSecret = Data(buffer: secret)
        self.config = config.flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }
        self.status = Status(rawValue: status) ?? .inactive
        statusReason = reason
        self.verification = verification
        createdAt = created
    }
}

/// How the deliveries of a new webhook go (``SyncSettings/webhookTimeout``,
/// ``SyncSettings/webhookRetryWindow`` and ``SyncSettings/webhookKeep``).
struct WebhookDeliverySettings: Sendable {
    var timeout: Duration
    var retryWindow: Duration
    var keep: Duration
    var privateTargets: Bool
}

/// The apps' webhooks and their verification.
struct WebhookRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The most webhooks one app may have.
    static let maxPerApp = 25

    /// Stores a new webhook, unverified and due for its challenge now; 422 past ``maxPerApp``.
    func create(
        app: UUID, _ input: WebhookInput, sealedSecret: Data, delivery: WebhookDeliverySettings, logger: Logger
    ) async throws -> WebhookRecord {
        let id = UUID()
        let config = input.config.map { JSONValue.object($0.mapValues(JSONValue.string)).jsonText }
        return try await write(logger: logger) { connection in
            // One app's registrations take turns, so that the count below holds.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(app.lowercased), 14))", logger: logger)
            var count = 0
            for try await value in try await connection.query(
                "SELECT count(*)::int FROM sync.webhooks WHERE app_id = \(app)", logger: logger
            ).decode(Int.self) { count = value }
            guard count < Self.maxPerApp else {
                throw APIError(.invalidOperation, "An app has at most \(Self.maxPerApp) webhooks; delete one first.")
            }
            let rows = try await connection.query(
                """
                INSERT INTO sync.webhooks (id, app_id, version, target_url, events, kinds, secret, config, verify_after,
                    timeout_ms, retry_window_s, keep_s, private_targets)
                VALUES (\(id), \(app), \(input.version), \(input.targetURL), \(input.events),
                    \(WebhookEvents.kinds(of: input.events)), \(ByteBuffer(data: sealedSecret)), \(config)::jsonb, now(),
                    \(Int32(WebhookRepository.milliseconds(delivery.timeout))), \(Int32(delivery.retryWindow.components.seconds)),
                    \(Int32(delivery.keep.components.seconds)), \(delivery.privateTargets))
                RETURNING \(unescaped: WebhookRecord.columns)
                """, logger: logger)
            for try await row in rows { return try WebhookRecord(row: row) }
            throw APIError(.internalServerError, "The webhook was not stored.")
        }
    }

    func webhooks(app: UUID, logger: Logger) async throws -> [WebhookRecord] {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: WebhookRecord.columns) FROM sync.webhooks WHERE app_id = \(app) ORDER BY id
            """, logger: logger)
        var found: [WebhookRecord] = []
        for try await row in rows { found.append(try WebhookRecord(row: row)) }
        return found
    }

    func webhook(_ id: UUID, app: UUID, logger: Logger) async throws -> WebhookRecord? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: WebhookRecord.columns) FROM sync.webhooks WHERE id = \(id) AND app_id = \(app)", logger: logger)
        for try await row in rows { return try WebhookRecord(row: row) }
        return nil
    }

    /// Asks for a new verification: the webhook is unverified until it answers. An active webhook
    /// stays as it is.
    /// Its undelivered events are tried again at once, with a retry window of their own.
    func activate(_ id: UUID, app: UUID, logger: Logger) async throws -> WebhookRecord? {
        let activated = try await write(logger: logger) { connection -> WebhookRecord? in
            let rows = try await connection.query(
                """
                UPDATE sync.webhooks SET status = 'unverified', status_reason = NULL, verification = verification + 1,
                    verify_after = now(), updated_at = now(), paused = false
                WHERE id = \(id) AND app_id = \(app) AND status <> 'active' RETURNING \(unescaped: WebhookRecord.columns)
                """, logger: logger)
            var record: WebhookRecord?
            for try await row in rows { record = try WebhookRecord(row: row) }
            guard record != nil else { return nil }
            try await connection.query(
                """
                UPDATE sync.webhook_deliveries SET first_failed_at = NULL, next_attempt_at = now()
                WHERE webhook_id = \(id) AND delivered_at IS NULL
                """, logger: logger)
            return record
        }
        if let activated { return activated }
        return try await webhook(id, app: app, logger: logger)
    }

    /// Stops the webhook until it is activated again.
    func deactivate(_ id: UUID, app: UUID, reason: String, logger: Logger) async throws -> WebhookRecord? {
        let rows = try await write(
            """
            UPDATE sync.webhooks SET status = 'inactive', status_reason = \(reason), verify_after = NULL, updated_at = now(),
                paused = false
            WHERE id = \(id) AND app_id = \(app) RETURNING \(unescaped: WebhookRecord.columns)
            """, logger: logger)
        return try rows.first.map(WebhookRecord.init(row:))
    }

    func delete(_ id: UUID, app: UUID, logger: Logger) async throws -> Bool {
        !(try await write("DELETE FROM sync.webhooks WHERE id = \(id) AND app_id = \(app) RETURNING 1", logger: logger))
            .isEmpty
    }

    // MARK: Verification

    /// Takes up to `limit` webhooks due for their challenge, putting each off by `lease` so that
    /// no other replica takes it meanwhile.
    func dueForVerification(limit: Int, lease: Duration, logger: Logger) async throws -> [WebhookRecord] {
        let seconds = Double(lease.components.seconds)
        let rows = try await write(
            """
            UPDATE sync.webhooks SET verify_after = now() + \(seconds) * interval '1 second'
            WHERE id IN (
                SELECT id FROM sync.webhooks WHERE status = 'unverified' AND verify_after <= now()
                ORDER BY verify_after LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: WebhookRecord.columns)
            """, logger: logger)
        return try rows.map(WebhookRecord.init(row:))
    }

    /// Records the answer to verification `verification`: active, or inactive for `failure`.
    /// Nothing changes when the webhook was activated, deactivated or deleted meanwhile.
    func verified(_ id: UUID, verification: Int64, failure: String?, logger: Logger) async throws {
        try await write(
            """
            UPDATE sync.webhooks
            SET status = \(failure == nil ? "active" : "inactive"), status_reason = \(failure), verify_after = NULL,
                updated_at = now()
            WHERE id = \(id) AND verification = \(verification) AND status = 'unverified'
            """, logger: logger)
    }
}
