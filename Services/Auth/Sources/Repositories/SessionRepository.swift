import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

struct UserRecord: Sendable, Equatable {
    var identity: InternalAPI.Identity
    var suspended: Bool
}

/// A session as introspection sees it.
struct SessionRecord: Sendable {
    var appID: UUID
    var identity: InternalAPI.Identity
    var expiresAt: Date
    var challenged: Bool
    var suspended: Bool
    var certificateThumbprint: String?
    /// The bound certificate was revoked or has expired.
    var certificateRevoked: Bool
}

/// Users as the auth service knows them (identity claims and suspension) and their sessions.
/// Sessions are found by the SHA-256 of their token; the token itself is never stored.
struct SessionRepository: PostgresRepository {
    let postgres: PostgresClient

    func user(app: UUID, userID: String, logger: Logger) async throws -> UserRecord? {
        let rows = try await postgres.query(
            """
            SELECT user_id, display_name, avatar_url, first_name, last_name, suspended
            FROM auth.users WHERE app_id = \(app) AND user_id = \(userID)
            """, logger: logger)
        for try await row in rows.decode((String, String?, String?, String?, String?, Bool).self) {
            return UserRecord(
                identity: .init(
                    userID: row.0, displayName: row.1, avatarURL: row.2, firstName: row.3, lastName: row.4),
                suspended: row.5)
        }
        return nil
    }

    enum OpenOutcome: Sendable {
        /// A new session with the token asked for was stored.
        case opened(UserRecord, UnreportedClaims)
        /// The session being renewed works again, with a fresh lifetime, bound to the certificate
        /// it is bound to now.
        case renewed(UserRecord, UnreportedClaims, certificateThumbprint: String?)
        case suspended
        case nonceNotFound
    }

    /// The users among `users` that the app knows (they signed in once) and has not suspended.
    func knownUsers(app: UUID, among users: [String], logger: Logger) async throws -> [String] {
        let rows = try await postgres.query(
            """
            SELECT user_id FROM auth.users WHERE app_id = \(app) AND user_id = ANY(\(users)) AND NOT suspended
            ORDER BY user_id
            """, logger: logger)
        var known: [String] = []
        for try await user in rows.decode(String.self) { known.append(user) }
        return known
    }

    /// Opens a session in one statement (one round trip, atomic like a transaction): spends the
    /// nonce unless the user is suspended; only if it was spent, creates or updates the user from
    /// the claims and then either renews `renewing` (a session of that same user, typically
    /// challenged) or stores a new session with `token`. A renewal over a connection with a device
    /// certificate binds the session to that certificate, as a new session would be; one without
    /// keeps the binding it had. Of concurrent statements with the same nonce exactly one deletes
    /// it, so exactly one opens a session. The token's claims join the user's claims that the
    /// sync service has yet to be told of (``UnreportedClaims``), in the same statement, so that
    /// no sign-in goes unreported; the reporter leaves them for `reportHold`, while the sign-in
    /// reports them itself.
    func openSession(
        app: UUID, identity: InternalAPI.Identity, nonce: String, token: String, renewing: String?, ttlSeconds: Int,
        certificateThumbprint: String?, reportHold: Duration, logger: Logger
    ) async throws -> OpenOutcome {
        let expiresAt = Date().addingTimeInterval(TimeInterval(ttlSeconds))
        let renewingHash = renewing.map { Data(Secrets.hash($0)) }
        let rows = try await write(
            """
            WITH blocked AS (
                SELECT 1 FROM auth.users WHERE app_id = \(app) AND user_id = \(identity.userID) AND suspended
            ), spent AS (
                DELETE FROM auth.nonces
                WHERE nonce = \(nonce) AND expires_at > now() AND NOT EXISTS (SELECT 1 FROM blocked)
                RETURNING 1
            ), stored AS (
                INSERT INTO auth.users (app_id, user_id, display_name, avatar_url, first_name, last_name)
                SELECT \(app), \(identity.userID), \(identity.displayName), \(identity.avatarURL),
                       \(identity.firstName), \(identity.lastName)
                WHERE EXISTS (SELECT 1 FROM spent)
                ON CONFLICT (app_id, user_id) DO UPDATE SET
                    display_name = COALESCE(EXCLUDED.display_name, users.display_name),
                    avatar_url = COALESCE(EXCLUDED.avatar_url, users.avatar_url),
                    first_name = COALESCE(EXCLUDED.first_name, users.first_name),
                    last_name = COALESCE(EXCLUDED.last_name, users.last_name),
                    updated_at = now()
                RETURNING display_name, avatar_url, first_name, last_name
            ), renewed AS (
                UPDATE auth.sessions SET challenged_at = NULL, expires_at = \(expiresAt),
                    certificate_thumbprint = COALESCE(\(certificateThumbprint), certificate_thumbprint)
                WHERE token_hash = \(renewingHash) AND app_id = \(app) AND user_id = \(identity.userID)
                    AND EXISTS (SELECT 1 FROM stored)
                RETURNING certificate_thumbprint
            ), opened AS (
                INSERT INTO auth.sessions (id, app_id, user_id, token_hash, expires_at, certificate_thumbprint)
                SELECT \(UUID()), \(app), \(identity.userID), \(Data(Secrets.hash(token))), \(expiresAt),
                       \(certificateThumbprint)
                FROM stored
                WHERE NOT EXISTS (SELECT 1 FROM renewed)
                RETURNING 1
            ), unreported AS (
                INSERT INTO auth.unreported_claims AS c (
                    app_id, user_id, display_name, avatar_url, first_name, last_name, next_attempt_at)
                SELECT \(app), \(identity.userID), \(identity.displayName), \(identity.avatarURL), \(identity.firstName),
                       \(identity.lastName), now() + make_interval(secs => \(reportHold.inSeconds))
                FROM stored
                ON CONFLICT (app_id, user_id) DO UPDATE SET
                    display_name = COALESCE(EXCLUDED.display_name, c.display_name),
                    avatar_url = COALESCE(EXCLUDED.avatar_url, c.avatar_url),
                    first_name = COALESCE(EXCLUDED.first_name, c.first_name),
                    last_name = COALESCE(EXCLUDED.last_name, c.last_name),
                    version = c.version + 1, attempts = 0, next_attempt_at = excluded.next_attempt_at, signed_in_at = now()
                RETURNING display_name, avatar_url, first_name, last_name, version,
                          \(unescaped: ClaimsRepository.signedInMicroseconds("c")) AS signed_in_us
            )
            SELECT EXISTS (SELECT 1 FROM blocked), EXISTS (SELECT 1 FROM renewed), EXISTS (SELECT 1 FROM opened),
                   stored.display_name, stored.avatar_url, stored.first_name, stored.last_name,
                   (SELECT certificate_thumbprint FROM renewed),
                   unreported.display_name, unreported.avatar_url, unreported.first_name, unreported.last_name,
                   unreported.version, unreported.signed_in_us
            FROM (SELECT 1) AS one LEFT JOIN stored ON true LEFT JOIN unreported ON true
            """, logger: logger)
        for stored in rows {
            let row = try stored.decode(
                (
                    Bool, Bool, Bool, String?, String?, String?, String?, String?, String?, String?, String?, String?, Int64?,
                    Int64?
                ).self)
            let user = UserRecord(
                identity: .init(
                    userID: identity.userID, displayName: row.3, avatarURL: row.4, firstName: row.5, lastName: row.6),
                suspended: false)
            let unreported = UnreportedClaims(
                app: app,
                claims: .init(
                    identity: .init(
                        userID: identity.userID, displayName: row.8, avatarURL: row.9, firstName: row.10, lastName: row.11),
                    signedInAt: row.13 ?? 0),
                version: row.12 ?? 0)
            if row.0 { return .suspended }
            if row.1 { return .renewed(user, unreported, certificateThumbprint: row.7) }
            return row.2 ? .opened(user, unreported) : .nonceNotFound
        }
        return .nonceNotFound
    }

    func session(token: String, logger: Logger) async throws -> SessionRecord? {
        try await sessions(tokens: [token], logger: logger)[0]
    }

    /// The sessions of `tokens`, in their order (nil for a token of no session), in one lookup.
    func sessions(tokens: [String], logger: Logger) async throws -> [SessionRecord?] {
        let hashes = tokens.map { Data(Secrets.hash($0)) }
        // bytea has no array binding here: the hashes go as hex text.
        let hex = hashes.map { $0.map { String(format: "%02x", $0) }.joined() }
        let rows = try await postgres.query(
            """
            SELECT s.token_hash, s.app_id, s.user_id, u.display_name, u.avatar_url, u.first_name, u.last_name,
                   s.expires_at, s.challenged_at IS NOT NULL, u.suspended, s.certificate_thumbprint,
                   COALESCE(c.revoked_at IS NOT NULL OR c.expires_at <= now(), false)
            FROM auth.sessions s
            JOIN auth.users u ON u.app_id = s.app_id AND u.user_id = s.user_id
            LEFT JOIN auth.certificates c ON c.thumbprint = s.certificate_thumbprint
            WHERE s.token_hash IN (SELECT decode(h, 'hex') FROM unnest(\(hex)::text[]) AS h)
            """, logger: logger)
        var found: [Data: SessionRecord] = [:]
        for try await row in rows.decode(
            (Data, UUID, String, String?, String?, String?, String?, Date, Bool, Bool, String?, Bool).self)
        {
            found[row.0] = SessionRecord(
                appID: row.1,
                identity: .init(userID: row.2, displayName: row.3, avatarURL: row.4, firstName: row.5, lastName: row.6),
                expiresAt: row.7, challenged: row.8, suspended: row.9, certificateThumbprint: row.10,
                certificateRevoked: row.11)
        }
        return hashes.map { found[$0] }
    }

    /// Ends one session (logout); whose it was, or nil when there was none.
    func deleteSession(token: String, logger: Logger) async throws -> (app: UUID, user: String)? {
        let rows = try await write(
            "DELETE FROM auth.sessions WHERE token_hash = \(Data(Secrets.hash(token))) RETURNING app_id, user_id",
            logger: logger)
        for row in rows { return try row.decode((UUID, String).self) }
        return nil
    }

    /// Ends every session of a user; returns how many there were.
    @discardableResult
    func deleteSessions(app: UUID, userID: String, logger: Logger) async throws -> Int {
        let rows = try await write(
            "DELETE FROM auth.sessions WHERE app_id = \(app) AND user_id = \(userID) RETURNING id", logger: logger)
        var count = 0
        for _ in rows { count += 1 }
        return count
    }

    /// Challenges every live session of a user: each answers 401 with a new nonce until renewed.
    func challengeSessions(app: UUID, userID: String, logger: Logger) async throws -> Int {
        let rows = try await write(
            """
            UPDATE auth.sessions SET challenged_at = now()
            WHERE app_id = \(app) AND user_id = \(userID) AND challenged_at IS NULL RETURNING id
            """, logger: logger)
        var count = 0
        for _ in rows { count += 1 }
        return count
    }

    /// Suspends or reinstates a user. While suspended, the user's sessions answer 403
    /// `user_suspended` and no new ones open; reinstating clears them, so the user signs in again.
    /// A user who never signed in (the app made them through the Server API) gets a row here when
    /// suspended, which keeps them from signing in. False when reinstating a user who has no row.
    func setSuspended(app: UUID, userID: String, suspended: Bool, logger: Logger) async throws -> Bool {
        try await postgres.transaction(logger: logger) { connection in
            let rows =
                suspended
                ? try await connection.query(
                    """
                    INSERT INTO auth.users (app_id, user_id, suspended) VALUES (\(app), \(userID), true)
                    ON CONFLICT (app_id, user_id) DO UPDATE SET suspended = true, updated_at = now()
                    RETURNING 1
                    """, logger: logger)
                : try await connection.query(
                    """
                    UPDATE auth.users SET suspended = false, updated_at = now()
                    WHERE app_id = \(app) AND user_id = \(userID) RETURNING 1
                    """, logger: logger)
            var found = false
            for try await _ in rows { found = true }
            if found && !suspended {
                try await connection.query(
                    "DELETE FROM auth.sessions WHERE app_id = \(app) AND user_id = \(userID)", logger: logger)
            }
            return found
        }
    }

    func deleteExpired(logger: Logger) async throws {
        try await write("DELETE FROM auth.sessions WHERE expires_at <= now()", logger: logger)
    }
}
