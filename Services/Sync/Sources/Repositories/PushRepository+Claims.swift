import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// A batch of push jobs taken by one replica, with every device they reach and each recipient's
/// badge: what the sender needs, read in the statement that takes the jobs.
struct ClaimedPushes: Sendable {
    var jobs: [PushJob] = []
    var targets: [PushTarget] = []
    /// Per target, in the same order: the recipient's badge.
    var badges: [Int] = []
}

extension PushRepository {
    /// Takes up to `limit` due jobs under a lease (until `lease` has passed no other replica takes
    /// them; a replica that dies holding them leaves them to the next after it), and reads the
    /// devices they reach, in one statement:
    /// - a message: each current participant but the sender who has not muted the conversation
    ///   (`private_metadata.muted` = `"true"`) nor blocked the sender;
    /// - an announcement: each recipient but the sender;
    /// - a push-only notification or a badge: the users it names;
    /// for each of their tokens whose session has no WebSocket or event stream open on a live
    /// replica now, with the user's badge (the app's external count plus their unread messages).
    func claim(limit: Int, lease: Duration, logger: Logger) async throws -> ClaimedPushes {
        let statement = ClaimPushesStatement(leaseSeconds: Int32(lease.components.seconds), limit: Int32(limit))
        var claimed = ClaimedPushes()
        for try await row in try await postgres.execute(statement, logger: logger) {
            let (
                id, app, kind, subject, users, jobNotification, delivery, created, user, device, provider, token, bundle,
                notification, message, conversation, announcement, badge
            ) = row
            let job = PushJob(
                id: id, app: app, kind: kind, subject: subject, users: users, notification: jobNotification, delivery: delivery,
                createdAt: created)
            if claimed.jobs.last?.id != job.id { claimed.jobs.append(job) }
            guard let user, let device, let provider, let token else { continue }
            var layer: [String: String] = [:]
            var collapseID: String?
            var threadID: String?
            if let message, let conversation {
                layer = [
                    "conversation_identifier": LayerID(.conversations, conversation).uri,
                    "message_identifier": LayerID(.messages, message).uri,
                ]
                collapseID = message.lowercased
                threadID = conversation.lowercased
            } else if let announcement {
                layer = ["announcement_identifier": LayerID(.announcements, announcement).uri]
                collapseID = announcement.lowercased
            } else if job.kind == .badge {
                collapseID = "badge"
            }
            claimed.targets.append(
                PushTarget(
                    job: job.id, app: job.app, user: user, device: device, provider: PushProvider(rawValue: provider) ?? .fcm,
                    token: token, bundleID: bundle, notification: notification.flatMap(JSONValue.init(jsonText:)), layer: layer,
                    collapseID: collapseID, threadID: threadID))
            claimed.badges.append(Int(badge ?? 0))
        }
        return claimed
    }
}

/// The statement of ``PushRepository/claim(limit:lease:logger:)``, prepared once per connection: it
/// runs for every batch the sender takes, and planning it anew each time would cost more than
/// running it.
struct ClaimPushesStatement: PostgresPreparedStatement {
    typealias Row = (
        Int64, UUID, String, UUID?, [String]?, String?, String?, Date, String?, String?, String?, String?, String?, String?,
        UUID?, UUID?, UUID?, Int64?
    )

    static let sql = """
        WITH claimed AS (
            UPDATE sync.push_jobs SET attempts = attempts + 1,
                next_attempt_at = now() + $1 * interval '1 second'
            WHERE id IN (SELECT id FROM sync.push_jobs WHERE next_attempt_at <= now() ORDER BY next_attempt_at
                LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING id, app_id, kind, subject_id, users, notification, delivery, created_at
        ),
        reached AS (
            SELECT c.id AS job, t.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id, t.session_ref,
                m.notification, m.id AS message_id, m.conversation_id, NULL::uuid AS announcement_id
            FROM claimed c
            JOIN sync.messages m ON c.kind = 'message' AND m.id = c.subject_id AND m.deleted_at IS NULL
            JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.left_position IS NULL
                AND p.user_id IS DISTINCT FROM m.sender_id AND coalesce(p.private_metadata->>'muted', '') <> 'true'
            JOIN sync.push_tokens t ON t.app_id = m.app_id AND t.user_id = p.user_id
            WHERE NOT EXISTS (SELECT 1 FROM sync.blocks b
                WHERE b.app_id = m.app_id AND b.owner_id = p.user_id AND b.blocked_id = m.sender_id)
            UNION ALL
            SELECT c.id, t.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id, t.session_ref,
                a.notification, NULL, NULL, a.id
            FROM claimed c
            JOIN sync.announcements a ON c.kind = 'announcement' AND a.id = c.subject_id
            JOIN sync.announcement_recipients r ON r.announcement_id = a.id AND r.deleted_at IS NULL
                AND r.user_id IS DISTINCT FROM a.sender_id
            JOIN sync.push_tokens t ON t.app_id = a.app_id AND t.user_id = r.user_id
            UNION ALL
            SELECT c.id, t.app_id, t.user_id, t.device_id, t.provider, t.token, t.apns_bundle_id, t.session_ref,
                CASE WHEN c.kind = 'notification' THEN c.notification END, NULL, NULL, NULL
            FROM claimed c CROSS JOIN LATERAL unnest(c.users) AS u (user_id)
            JOIN sync.push_tokens t ON t.app_id = c.app_id AND t.user_id = u.user_id
            WHERE c.kind IN ('notification', 'badge')
        ),
        offline AS (
            SELECT * FROM reached t WHERE NOT EXISTS (
                SELECT 1 FROM sync.devices d JOIN sync.replicas r ON r.id = d.replica_id
                WHERE d.app_id = t.app_id AND d.user_id = t.user_id AND d.session_ref = t.session_ref
                  AND r.seen_at >= now() - interval '30 seconds')
        )
        SELECT c.id, c.app_id, c.kind, c.subject_id, c.users, c.notification::text, c.delivery::text, c.created_at,
            o.user_id, o.device_id, o.provider, o.token, o.apns_bundle_id, o.notification::text, o.message_id,
            o.conversation_id, o.announcement_id,
            (coalesce((SELECT g.external_unread_count FROM sync.badges g
                WHERE g.app_id = o.app_id AND g.user_id = o.user_id), 0)
            + coalesce((SELECT sum(p.unread_count) FROM sync.participants p JOIN sync.conversations v ON v.id = p.conversation_id
                WHERE p.app_id = o.app_id AND p.user_id = o.user_id AND NOT p.hidden AND v.deleted_at IS NULL), 0))::int8
        FROM claimed c LEFT JOIN offline o ON o.job = c.id
        ORDER BY c.id
        """

    let leaseSeconds: Int32
    let limit: Int32

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(leaseSeconds)
        bindings.append(limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
