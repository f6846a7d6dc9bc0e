import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The devices' push tokens and the apps' push providers. The jobs and the failure log are in
/// `PushRepository+Jobs.swift`.
struct PushRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The most push tokens a user keeps; registering one more forgets the least recently used.
    static let maxTokensPerUser = 25

    struct Token: Sendable, Equatable {
        var deviceID: String
        var provider: PushProvider
        var token: String
        var apnsBundleID: String?
        var gcmSenderID: String?
        var iosVersion: String?
    }

    /// Records (or refreshes) the token of one device of a user, tied to the session that
    /// registered it. The token leaves any other device or user that held it, and the user's
    /// least recently used tokens beyond ``maxTokensPerUser`` are forgotten, all in one transaction.
    func register(_ token: Token, app: UUID, user: String, session: String, logger: Logger) async throws {
        try await write(logger: logger) { connection in
            try await connection.query(
                """
                DELETE FROM sync.push_tokens WHERE app_id = \(app) AND provider = \(token.provider.rawValue)
                  AND token = \(token.token) AND NOT (user_id = \(user) AND device_id = \(token.deviceID))
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO sync.push_tokens AS t (app_id, user_id, device_id, provider, token, apns_bundle_id, gcm_sender_id,
                    ios_version, session_ref)
                VALUES (\(app), \(user), \(token.deviceID), \(token.provider.rawValue), \(token.token), \(token.apnsBundleID),
                    \(token.gcmSenderID), \(token.iosVersion), \(session))
                ON CONFLICT (app_id, user_id, device_id) DO UPDATE SET provider = excluded.provider, token = excluded.token,
                    apns_bundle_id = excluded.apns_bundle_id, gcm_sender_id = excluded.gcm_sender_id,
                    ios_version = excluded.ios_version, session_ref = excluded.session_ref, used_at = now()
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM sync.push_tokens WHERE app_id = \(app) AND user_id = \(user) AND device_id IN (
                    SELECT device_id FROM sync.push_tokens WHERE app_id = \(app) AND user_id = \(user)
                    ORDER BY used_at DESC, created_at DESC OFFSET \(Self.maxTokensPerUser))
                """, logger: logger)
        }
    }

    /// Forgets the token of one device of the user; false if it had none.
    func unregister(app: UUID, user: String, device: String, logger: Logger) async throws -> Bool {
        let rows = try await write(
            """
            DELETE FROM sync.push_tokens WHERE app_id = \(app) AND user_id = \(user) AND device_id = \(device)
            RETURNING 1
            """, logger: logger)
        return !rows.isEmpty
    }

    /// Forgets the tokens registered by sessions that ended (logged out, revoked): a device that
    /// signed out hears nothing more for its user. `sessions` nil: every session of the user.
    func sessionsEnded(app: UUID, user: String, sessions: [String]?, logger: Logger) async throws {
        try await write(
            """
            DELETE FROM sync.push_tokens WHERE app_id = \(app) AND user_id = \(user)
              AND (\(sessions)::text[] IS NULL OR session_ref = ANY(\(sessions)))
            """, logger: logger)
    }

    // MARK: Providers

    /// A provider as stored: its key still sealed.
    struct ProviderRecord: Sendable {
        var app: UUID
        var provider: PushProvider
        var settings: JSONValue
        var sealedKey: Data
        var failing: Bool
        var statusReason: String?
        var failingSince: Date?
        var updatedAt: Date

        static let columns = "app_id, provider, settings::text, sealed_key, status, status_reason, failing_since, updated_at"

        init(row: PostgresRow) throws {
            let (app, provider, settings, key, status, reason, since, updated) = try row.decode(
                (UUID, String, String, ByteBuffer, String, String?, Date?, Date).self)
            self.app = app
            self.provider = PushProvider(rawValue: provider) ?? .apns
            self.settings = JSONValue(jsonText: settings) ?? .null
            sealedKey = Data(buffer: key)
            failing = status == "failing"
            statusReason = reason
            failingSince = since
            updatedAt = updated
        }

        /// As the admin API shows it: the settings, never the key, and whether it works.
        var shown: JSONValue {
            guard case .object(var fields) = settings else { return .null }
            fields["provider"] = .string(provider.rawValue)
            fields["status"] = failing ? "failing" : "ok"
            fields["status_reason"] = statusReason.map(JSONValue.string) ?? .null
            fields["failing_since"] = failingSince.map { .string(LayerTimestamp.string($0)) } ?? .null
            fields["updated_at"] = .string(LayerTimestamp.string(updatedAt))
            return .object(fields)
        }
    }

    func providers(apps: [UUID], logger: Logger) async throws -> [ProviderRecord] {
        let rows = try await postgres.query(
            "SELECT \(unescaped: ProviderRecord.columns) FROM sync.push_providers WHERE app_id = ANY(\(apps))",
            logger: logger)
        var records: [ProviderRecord] = []
        for try await row in rows { records.append(try ProviderRecord(row: row)) }
        return records
    }

    /// Sets the app's credentials for a provider; new credentials start out working.
    func setProvider(app: UUID, credentials: PushCredentials, sealedKey: Data, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO sync.push_providers AS p (app_id, provider, settings, sealed_key)
            VALUES (\(app), \(credentials.provider.rawValue), \(credentials.settings.jsonText)::jsonb, \(ByteBuffer(data: sealedKey)))
            ON CONFLICT (app_id, provider) DO UPDATE SET settings = excluded.settings, sealed_key = excluded.sealed_key,
                status = 'ok', status_reason = NULL, failing_since = NULL, updated_at = clock_timestamp()
            """, logger: logger)
    }

    func removeProvider(app: UUID, provider: PushProvider, logger: Logger) async throws -> Bool {
        let rows = try await write(
            "DELETE FROM sync.push_providers WHERE app_id = \(app) AND provider = \(provider.rawValue) RETURNING 1",
            logger: logger)
        return !rows.isEmpty
    }

    /// The provider refused the app's credentials: it is marked failing with the reason, unless
    /// they were replaced since (`updatedAt` is when the refused ones were set).
    func markFailing(app: UUID, provider: PushProvider, updatedAt: Date, reason: String, logger: Logger) async throws {
        try await write(
            """
            UPDATE sync.push_providers SET status = 'failing', status_reason = \(reason),
                failing_since = coalesce(failing_since, now())
            WHERE app_id = \(app) AND provider = \(provider.rawValue)
              AND updated_at <= \(updatedAt)::timestamptz + interval '1 millisecond'
            """, logger: logger)
    }

    /// How many providers of all apps are failing.
    func failingProviders(logger: Logger) async throws -> Int {
        let rows = try await postgres.query(
            "SELECT count(*)::int8 FROM sync.push_providers WHERE status = 'failing'", logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}

extension SyncRepositories {
    var pushNotifications: PushRepository { PushRepository(postgres: postgres) }
}
