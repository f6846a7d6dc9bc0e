import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// One user's identity-token claims that the sync service has yet to be told of: those of every
/// sign-in since the last report, merged in order.
struct UnreportedClaims: Sendable, Equatable {
    var app: UUID
    var claims: InternalAPI.SignInClaims
    /// Raised by every sign-in: a report clears the row only if no sign-in came after it.
    var version: Int64
}

/// The sign-ins whose claims are still to be reported to the sync service (`auth.unreported_claims`;
/// rows are written by ``SessionRepository/openSession``).
struct ClaimsRepository: PostgresRepository {
    let postgres: PostgresClient

    /// Up to `limit` rows due for a report, each put off by `lease` meanwhile, so that another
    /// replica's reporter leaves them alone while this one reports them.
    func due(limit: Int, lease: Duration, logger: Logger) async throws -> [UnreportedClaims] {
        let rows = try await write(
            """
            UPDATE auth.unreported_claims c SET next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            FROM (SELECT app_id, user_id FROM auth.unreported_claims WHERE next_attempt_at <= now()
                  ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED) AS due
            WHERE c.app_id = due.app_id AND c.user_id = due.user_id
            RETURNING c.app_id, c.user_id, c.display_name, c.avatar_url, c.first_name, c.last_name, c.version,
                      \(unescaped: Self.signedInMicroseconds("c"))
            """, logger: logger)
        return try rows.map { row in
            let (app, user, displayName, avatarURL, firstName, lastName, version, signedInAt) = try row.decode(
                (UUID, String, String?, String?, String?, String?, Int64, Int64).self)
            return UnreportedClaims(
                app: app,
                claims: .init(
                    identity: .init(
                        userID: user, displayName: displayName, avatarURL: avatarURL, firstName: firstName, lastName: lastName),
                    signedInAt: signedInAt),
                version: version)
        }
    }

    /// The sync service has these claims: their rows go, unless a sign-in came after them.
    func reported(_ entries: [UnreportedClaims], logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        try await write(
            """
            DELETE FROM auth.unreported_claims c
            USING unnest(\(entries.map(\.app))::uuid[], \(entries.map(\.claims.identity.userID))::text[],
                         \(entries.map(\.version))::bigint[]) AS r(app_id, user_id, version)
            WHERE c.app_id = r.app_id AND c.user_id = r.user_id AND c.version = r.version
            """, logger: logger)
    }

    /// A report failed: each row is tried again after `first`, twice as long after every further
    /// failure, at most `longest` (a sign-in since then has made its row due at once already).
    func failed(_ entries: [UnreportedClaims], first: Duration, longest: Duration, logger: Logger) async throws {
        guard !entries.isEmpty else { return }
        try await write(
            """
            UPDATE auth.unreported_claims c SET attempts = c.attempts + 1,
                next_attempt_at = now() + make_interval(
                    secs => least(\(first.inSeconds) * power(2, least(c.attempts, 30)), \(longest.inSeconds)))
            FROM unnest(\(entries.map(\.app))::uuid[], \(entries.map(\.claims.identity.userID))::text[],
                        \(entries.map(\.version))::bigint[]) AS r(app_id, user_id, version)
            WHERE c.app_id = r.app_id AND c.user_id = r.user_id AND c.version = r.version
            """, logger: logger)
    }

    /// Whether any sign-in's claims wait to be reported.
    func anyUnreported(logger: Logger) async throws -> Bool {
        let rows = try await postgres.query("SELECT EXISTS (SELECT 1 FROM auth.unreported_claims)", logger: logger)
        for try await waiting in rows.decode(Bool.self) { return waiting }
        return false
    }
}

extension ClaimsRepository {
    /// The `signed_in_at` of the rows named `table`, in whole microseconds since 1970.
    static func signedInMicroseconds(_ table: String) -> String {
        "(extract(epoch FROM \(table).signed_in_at) * 1000000)::bigint"
    }
}

extension Duration {
    /// In seconds, with the fraction.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
