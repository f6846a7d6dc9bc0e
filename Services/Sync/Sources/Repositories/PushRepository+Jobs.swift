import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// A push job as stored: what happened (a message, an announcement, a push-only notification, a
/// badge that changed) or one push to try again.
struct PushJob: Sendable {
    enum Kind: String, Sendable {
        case message, announcement, notification, badge, retry
    }

    var id: Int64
    var app: UUID
    var kind: Kind
    var subject: UUID?
    var users: [String]
    var notification: JSONValue?
    var retry: PushRetry?
    var createdAt: Date

    init(
        id: Int64, app: UUID, kind: String, subject: UUID?, users: [String]?, notification: String?, delivery: String?,
        createdAt: Date
    ) {
        self.id = id
        self.app = app
        self.kind = Kind(rawValue: kind) ?? .notification
        self.subject = subject
        self.users = users ?? []
        self.notification = notification.flatMap(JSONValue.init(jsonText:))
        retry = delivery.flatMap { try? JSONDecoder().decode(PushRetry.self, from: Data($0.utf8)) }
        self.createdAt = createdAt
    }
}

/// One push that failed in a way worth trying again, kept as it was rendered.
struct PushRetry: Sendable, Codable {
    var push: RenderedPush
    var user: String
    var device: String
    var kind: String
    var subject: UUID?
    /// How many times it was sent.
    var tries: Int
}

/// One device a job reaches: the device's token and what it is told.
struct PushTarget: Sendable {
    var job: Int64
    var app: UUID
    var user: String
    var device: String
    var provider: PushProvider
    var token: String
    var bundleID: String?
    var notification: JSONValue?
    var layer: [String: String]
    var collapseID: String?
    var threadID: String?
}

/// One line of the failure log.
struct PushFailure: Sendable {
    var app: UUID
    var provider: PushProvider
    var user: String
    var device: String
    var kind: String
    var subject: UUID?
    var status: Int?
    var reason: String
    var outcome: String
}

extension UUID {
    /// The nil UUID, standing for none in arrays bound to SQL.
    static let none = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}

extension PushRepository {
    /// When the next job falls due, if any (none: the worker waits to be woken).
    func nextDue(logger: Logger) async throws -> Date? {
        let rows = try await postgres.query("SELECT min(next_attempt_at) FROM sync.push_jobs", logger: logger)
        for try await due in rows.decode(Date?.self) { return due }
        return nil
    }

    /// What a batch came to, in one transaction: its jobs done, pushes to try again as new jobs,
    /// tokens removed, failures logged.
    func settle(
        done: [Int64], retries: [(app: UUID, retry: PushRetry, at: Date)],
        gone: [(app: UUID, provider: PushProvider, token: String)],
        failures: [PushFailure], logger: Logger
    ) async throws {
        if retries.isEmpty, gone.isEmpty, failures.isEmpty {
            try await write("DELETE FROM sync.push_jobs WHERE id = ANY(\(done))", logger: logger)
            return
        }
        let encoder = JSONEncoder()
        let retryTexts = try retries.map { String(decoding: try encoder.encode($0.retry), as: UTF8.self) }
        try await write(logger: logger) { connection in
            try await connection.query("DELETE FROM sync.push_jobs WHERE id = ANY(\(done))", logger: logger)
            if !retries.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO sync.push_jobs (app_id, kind, delivery, next_attempt_at)
                    SELECT app, 'retry', delivery::jsonb, at FROM unnest(\(retries.map(\.app)), \(retryTexts),
                        \(retries.map(\.at))) AS r (app, delivery, at)
                    """, logger: logger)
            }
            if !gone.isEmpty {
                try await connection.query(
                    """
                    DELETE FROM sync.push_tokens t USING unnest(\(gone.map(\.app)), \(gone.map(\.provider.rawValue)),
                        \(gone.map(\.token))) AS g (app, provider, token)
                    WHERE t.app_id = g.app AND t.provider = g.provider AND t.token = g.token
                    """, logger: logger)
            }
            if !failures.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO sync.push_failures (app_id, provider, user_id, device_id, kind, subject_id, status, reason, outcome)
                    SELECT app, provider, user_id, device_id, kind, nullif(subject, \(UUID.none)), nullif(status, -1), reason, outcome
                    FROM unnest(\(failures.map(\.app)), \(failures.map(\.provider.rawValue)), \(failures.map(\.user)),
                        \(failures.map(\.device)), \(failures.map(\.kind)), \(failures.map { $0.subject ?? .none }),
                        \(failures.map { Int32($0.status ?? -1) }), \(failures.map(\.reason)), \(failures.map(\.outcome)))
                        AS f (app, provider, user_id, device_id, kind, subject, status, reason, outcome)
                    """, logger: logger)
            }
        }
    }

    /// Records a push-only notification for its recipients (nothing when the app has no provider).
    func enqueueNotification(app: UUID, users: [String], notification: JSONValue, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.push_jobs (app_id, kind, users, notification)
            SELECT \(app), 'notification', \(users), \(notification.jsonText)::jsonb
            WHERE EXISTS (SELECT 1 FROM sync.push_providers WHERE app_id = \(app))
            """, logger: logger)
    }

    /// Records that the user's badge changed (nothing when the app has no provider or the user no
    /// token; one waiting job per user).
    func enqueueBadge(app: UUID, user: String, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.push_jobs (app_id, kind, users)
            SELECT \(app), 'badge', ARRAY[\(user)]
            WHERE EXISTS (SELECT 1 FROM sync.push_providers WHERE app_id = \(app))
              AND EXISTS (SELECT 1 FROM sync.push_tokens WHERE app_id = \(app) AND user_id = \(user))
            ON CONFLICT (app_id, (users[1])) WHERE kind = 'badge' AND attempts = 0 DO NOTHING
            """, logger: logger)
    }

    /// The app's latest failures, newest first.
    func failures(app: UUID, limit: Int, logger: Logger) async throws -> [JSONValue] {
        let rows = try await postgres.query(
            """
            SELECT provider, user_id, device_id, kind, subject_id, status, reason, outcome, occurred_at
            FROM sync.push_failures WHERE app_id = \(app) ORDER BY id DESC LIMIT \(limit)
            """, logger: logger)
        var entries: [JSONValue] = []
        for try await (provider, user, device, kind, subject, status, reason, outcome, at) in rows.decode(
            (String, String?, String?, String, UUID?, Int32?, String, String, Date).self)
        {
            let subjectID: JSONValue =
                switch (kind, subject) {
                case ("message", let id?): .string(LayerID(.messages, id).uri)
                case ("announcement", let id?): .string(LayerID(.announcements, id).uri)
                default: .null
                }
            entries.append([
                "provider": .string(provider), "user_id": user.map(JSONValue.string) ?? .null,
                "device_id": device.map(JSONValue.string) ?? .null, "kind": .string(kind), "subject": subjectID,
                "status": status.map { .number(Double($0)) } ?? .null, "reason": .string(reason),
                "outcome": .string(outcome), "occurred_at": .string(LayerTimestamp.string(at)),
            ])
        }
        return entries
    }

    /// Forgets failures older than a week.
    func pruneFailures(logger: Logger) async throws {
        try await write("DELETE FROM sync.push_failures WHERE occurred_at < now() - interval '7 days'", logger: logger)
    }
}
