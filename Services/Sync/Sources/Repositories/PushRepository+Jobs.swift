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

    static let columns = "id, app_id, kind, subject_id, users, notification::text, delivery::text, created_at"

    init(row: PostgresRow) throws {
        let (id, app, kind, subject, users, notification, delivery, created) = try row.decode(
            (Int64, UUID, String, UUID?, [String]?, String?, String?, Date).self)
        self.id = id
        self.app = app
        self.kind = Kind(rawValue: kind) ?? .notification
        self.subject = subject
        self.users = users ?? []
        self.notification = notification.flatMap(JSONValue.init(jsonText:))
        retry = delivery.flatMap { try? JSONDecoder().decode(PushRetry.self, from: Data($0.utf8)) }
        createdAt = created
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
    /// A device counts as connected while its replica is alive (see ``DeviceRepository``).
    private static let connected = """
        EXISTS (SELECT 1 FROM sync.devices d JOIN sync.replicas r ON r.id = d.replica_id
            WHERE d.app_id = t.app_id AND d.user_id = t.user_id AND d.session_ref = t.session_ref
              AND r.seen_at >= now() - interval '30 seconds')
        """

    /// Takes up to `limit` due jobs under a lease: until `lease` has passed, no other replica
    /// takes them; a replica that dies holding them leaves them to the next after it.
    func claim(limit: Int, lease: Duration, logger: Logger) async throws -> [PushJob] {
        let rows = try await write(
            """
            UPDATE sync.push_jobs SET attempts = attempts + 1,
                next_attempt_at = now() + \(Int(lease.components.seconds)) * interval '1 second'
            WHERE id IN (SELECT id FROM sync.push_jobs WHERE next_attempt_at <= now() ORDER BY next_attempt_at
                LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: PushJob.columns)
            """, logger: logger)
        return try rows.map(PushJob.init(row:)).sorted { $0.id < $1.id }
    }

    /// When the next job falls due, if any (none: the worker waits to be woken).
    func nextDue(logger: Logger) async throws -> Date? {
        let rows = try await postgres.query("SELECT min(next_attempt_at) FROM sync.push_jobs", logger: logger)
        for try await due in rows.decode(Date?.self) { return due }
        return nil
    }

    /// The devices the message jobs reach: each current participant but the sender who has not
    /// muted the conversation (`private_metadata.muted` = `"true"`) nor blocked the sender, for each
    /// of their tokens whose session is not connected now.
    func messageTargets(_ jobs: [PushJob], logger: Logger) async throws -> [PushTarget] {
        guard !jobs.isEmpty else { return [] }
        let rows = try await postgres.query(
            """
            SELECT j.id, m.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id, m.notification::text,
                m.id, m.conversation_id
            FROM unnest(\(jobs.map(\.id)), \(jobs.map { $0.subject ?? UUID() })) AS j (id, message_id)
            JOIN sync.messages m ON m.id = j.message_id AND m.deleted_at IS NULL
            JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.left_position IS NULL
                AND p.user_id IS DISTINCT FROM m.sender_id AND coalesce(p.private_metadata->>'muted', '') <> 'true'
            JOIN sync.push_tokens t ON t.app_id = m.app_id AND t.user_id = p.user_id
            WHERE NOT EXISTS (SELECT 1 FROM sync.blocks b
                    WHERE b.app_id = m.app_id AND b.owner_id = p.user_id AND b.blocked_id = m.sender_id)
              AND NOT \(unescaped: Self.connected)
            """, logger: logger)
        var targets: [PushTarget] = []
        for try await (job, app, user, device, provider, token, bundle, notification, message, conversation) in rows.decode(
            (Int64, UUID, String, String, String, String, String?, String?, UUID, UUID).self)
        {
            targets.append(
                PushTarget(
                    job: job, app: app, user: user, device: device, provider: PushProvider(rawValue: provider) ?? .fcm,
                    token: token, bundleID: bundle, notification: notification.flatMap(JSONValue.init(jsonText:)),
                    layer: [
                        "conversation_identifier": LayerID(.conversations, conversation).uri,
                        "message_identifier": LayerID(.messages, message).uri,
                    ], collapseID: message.uuidString.lowercased(), threadID: conversation.uuidString.lowercased()))
        }
        return targets
    }

    /// The devices the announcement jobs reach: each recipient but the sender, for each token
    /// whose session is not connected now.
    func announcementTargets(_ jobs: [PushJob], logger: Logger) async throws -> [PushTarget] {
        guard !jobs.isEmpty else { return [] }
        let rows = try await postgres.query(
            """
            SELECT j.id, a.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id, a.notification::text, a.id
            FROM unnest(\(jobs.map(\.id)), \(jobs.map { $0.subject ?? UUID() })) AS j (id, announcement_id)
            JOIN sync.announcements a ON a.id = j.announcement_id
            JOIN sync.announcement_recipients r ON r.announcement_id = a.id AND r.deleted_at IS NULL
                AND r.user_id IS DISTINCT FROM a.sender_id
            JOIN sync.push_tokens t ON t.app_id = a.app_id AND t.user_id = r.user_id
            WHERE NOT \(unescaped: Self.connected)
            """, logger: logger)
        var targets: [PushTarget] = []
        for try await (job, app, user, device, provider, token, bundle, notification, announcement) in rows.decode(
            (Int64, UUID, String, String, String, String, String?, String?, UUID).self)
        {
            targets.append(
                PushTarget(
                    job: job, app: app, user: user, device: device, provider: PushProvider(rawValue: provider) ?? .fcm,
                    token: token, bundleID: bundle, notification: notification.flatMap(JSONValue.init(jsonText:)),
                    layer: ["announcement_identifier": LayerID(.announcements, announcement).uri],
                    collapseID: announcement.uuidString.lowercased(), threadID: nil))
        }
        return targets
    }

    /// The devices of the users a notification or badge job names, whose sessions are not
    /// connected now.
    func userTargets(_ jobs: [PushJob], logger: Logger) async throws -> [PushTarget] {
        guard !jobs.isEmpty else { return [] }
        var jobIDs: [Int64] = []
        var apps: [UUID] = []
        var users: [String] = []
        for job in jobs {
            for user in job.users {
                jobIDs.append(job.id)
                apps.append(job.app)
                users.append(user)
            }
        }
        let rows = try await postgres.query(
            """
            SELECT j.id, t.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id
            FROM unnest(\(jobIDs), \(apps), \(users)) AS j (id, app_id, user_id)
            JOIN sync.push_tokens t ON t.app_id = j.app_id AND t.user_id = j.user_id
            WHERE NOT \(unescaped: Self.connected)
            """, logger: logger)
        let byID = Dictionary(jobs.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var targets: [PushTarget] = []
        for try await (job, app, user, device, provider, token, bundle) in rows.decode(
            (Int64, UUID, String, String, String, String, String?).self)
        {
            let notification = byID[job]?.kind == .notification ? byID[job]?.notification : nil
            targets.append(
                PushTarget(
                    job: job, app: app, user: user, device: device, provider: PushProvider(rawValue: provider) ?? .fcm,
                    token: token, bundleID: bundle, notification: notification, layer: [:],
                    collapseID: byID[job]?.kind == .badge ? "badge" : nil, threadID: nil))
        }
        return targets
    }

    /// Each user's badge: the app's external count plus their unread messages (as `GET …/badge`
    /// counts them).
    func badges(_ users: [(app: UUID, user: String)], logger: Logger) async throws -> [String: Int] {
        guard !users.isEmpty else { return [:] }
        let rows = try await postgres.query(
            """
            SELECT u.app_id, u.user_id,
                (coalesce((SELECT b.external_unread_count FROM sync.badges b WHERE b.app_id = u.app_id AND b.user_id = u.user_id), 0)
                + coalesce((SELECT sum(p.unread_count) FROM sync.participants p JOIN sync.conversations c ON c.id = p.conversation_id
                    WHERE p.app_id = u.app_id AND p.user_id = u.user_id AND NOT p.hidden AND c.deleted_at IS NULL), 0))::int8
            FROM unnest(\(users.map(\.app)), \(users.map(\.user))) AS u (app_id, user_id)
            """, logger: logger)
        var badges: [String: Int] = [:]
        for try await (app, user, badge) in rows.decode((UUID, String, Int64).self) {
            badges[Self.badgeKey(app, user)] = Int(badge)
        }
        return badges
    }

    static func badgeKey(_ app: UUID, _ user: String) -> String { "\(app.uuidString)/\(user)" }

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
