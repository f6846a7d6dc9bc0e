import Foundation
import LayerServer
import Logging
import PostgresNIO

struct AppRecord: Sendable, Equatable {
    var id: UUID
    var name: String
    var sessionTTLSeconds: Int
    var requireCertified: Bool
    var createdAt: Date
    /// The web origins browsers may call the suite from for this app, as written.
    var allowedOrigins: [String] = []
}

struct KeyRecord: Sendable, Equatable {
    var id: UUID
    var app: AppRecord
    var appID: UUID { app.id }
    var providerID: UUID
    var publicKeyPEM: String
    var enabled: Bool
    var deleted: Bool
}

/// Apps, their identity providers and keys, and their Server API tokens.
struct AppRepository: PostgresRepository, AppTokenVerifier, AppOriginSource {
    let postgres: PostgresClient

    func createApp(name: String, allowedOrigins: [String], logger: Logger) async throws -> AppRecord {
        let app = try await firstApp(
            """
            INSERT INTO auth.apps (id, name, allowed_origins) VALUES (\(UUID()), \(name), \(allowedOrigins))
            RETURNING \(unescaped: Self.appColumns)
            """, logger: logger)
        guard let app else { throw APIError(.internalServerError, "The app was not created.") }
        return app
    }

    func app(_ id: UUID, logger: Logger) async throws -> AppRecord? {
        try await firstApp(
            "SELECT \(unescaped: Self.appColumns) FROM auth.apps WHERE id = \(id)", logger: logger)
    }

    /// Changes the settings given; returns the app as it is afterwards, or nil if there is none.
    func updateApp(
        _ id: UUID, sessionTTLSeconds: Int?, requireCertified: Bool?, allowedOrigins: [String]?, logger: Logger
    ) async throws -> AppRecord? {
        try await firstApp(
            """
            UPDATE auth.apps SET
                session_ttl_seconds = COALESCE(\(sessionTTLSeconds), session_ttl_seconds),
                require_certified = COALESCE(\(requireCertified), require_certified),
                allowed_origins = COALESCE(\(allowedOrigins)::text[], allowed_origins)
            WHERE id = \(id)
            RETURNING \(unescaped: Self.appColumns)
            """, logger: logger)
    }

    static let appColumns = "id, name, session_ttl_seconds, require_certified, created_at, allowed_origins"

    /// The first app a query returns as ``appColumns``.
    private func firstApp(_ query: PostgresQuery, logger: Logger) async throws -> AppRecord? {
        let rows = try await postgres.query(query, logger: logger).decode((UUID, String, Int, Bool, Date, [String]).self)
        for try await row in rows {
            return AppRecord(
                id: row.0, name: row.1, sessionTTLSeconds: row.2, requireCertified: row.3, createdAt: row.4,
                allowedOrigins: row.5)
        }
        return nil
    }

    /// Every app that allows a web origin, with the origins it allows.
    func appOrigins(logger: Logger) async throws -> [UUID: [String]] {
        let rows = try await postgres.query(
            "SELECT id, allowed_origins FROM auth.apps WHERE cardinality(allowed_origins) > 0", logger: logger)
        var origins: [UUID: [String]] = [:]
        for try await (app, list) in rows.decode((UUID, [String]).self) { origins[app] = list }
        return origins
    }

    // MARK: Providers and keys

    func createProvider(app: UUID, name: String?, logger: Logger) async throws -> UUID {
        let id = UUID()
        try await write(
            "INSERT INTO auth.providers (id, app_id, name) VALUES (\(id), \(app), \(name))", logger: logger)
        return id
    }

    /// The app a provider belongs to.
    func providerApp(_ provider: UUID, logger: Logger) async throws -> UUID? {
        let rows = try await postgres.query("SELECT app_id FROM auth.providers WHERE id = \(provider)", logger: logger)
        for try await app in rows.decode(UUID.self) { return app }
        return nil
    }

    func createKey(app: UUID, provider: UUID, publicKeyPEM: String, logger: Logger) async throws -> KeyRecord {
        let id = UUID()
        try await write(
            """
            INSERT INTO auth.keys (id, app_id, provider_id, public_key_pem)
            VALUES (\(id), \(app), \(provider), \(publicKeyPEM))
            """, logger: logger)
        guard let key = try await key(id, app: app, logger: logger) else {
            throw APIError(.internalServerError, "The key was not stored.")
        }
        return key
    }

    /// A key of `app` with its app's settings, deleted keys included (so a token signed with one
    /// can be told why it fails). One round trip: this is on the path of every new session.
    func key(_ id: UUID, app: UUID, logger: Logger) async throws -> KeyRecord? {
        try await key(id, app: Optional(app), logger: logger)
    }

    /// A key of any app: for tokens that name no app, whose app is the one that registered the key.
    func key(_ id: UUID, logger: Logger) async throws -> KeyRecord? {
        try await key(id, app: nil, logger: logger)
    }

    private func key(_ id: UUID, app: UUID?, logger: Logger) async throws -> KeyRecord? {
        let rows = try await postgres.query(
            """
            SELECT k.id, k.provider_id, k.public_key_pem, k.enabled, k.deleted_at IS NOT NULL,
                   a.id, a.name, a.session_ttl_seconds, a.require_certified, a.created_at
            FROM auth.keys k JOIN auth.apps a ON a.id = k.app_id
            WHERE k.id = \(id) AND (\(app)::uuid IS NULL OR k.app_id = \(app))
            """, logger: logger)
        for try await row in rows.decode((UUID, UUID, String, Bool, Bool, UUID, String, Int, Bool, Date).self) {
            return KeyRecord(
                id: row.0,
                app: AppRecord(id: row.5, name: row.6, sessionTTLSeconds: row.7, requireCertified: row.8, createdAt: row.9),
                providerID: row.1, publicKeyPEM: row.2, enabled: row.3, deleted: row.4)
        }
        return nil
    }

    func setKeyEnabled(
        _ id: UUID, app: UUID, provider: UUID, enabled: Bool, logger: Logger
    ) async throws -> KeyRecord? {
        try await write(
            """
            UPDATE auth.keys SET enabled = \(enabled)
            WHERE id = \(id) AND app_id = \(app) AND provider_id = \(provider) AND deleted_at IS NULL
            """, logger: logger)
        guard let key = try await key(id, app: app, logger: logger), key.providerID == provider, !key.deleted else {
            return nil
        }
        return key
    }

    /// Marks a key deleted; the row stays so that tokens naming it fail with `eit_key_deleted`.
    func deleteKey(_ id: UUID, app: UUID, provider: UUID, logger: Logger) async throws -> Bool {
        let rows = try await write(
            """
            UPDATE auth.keys SET deleted_at = now(), enabled = false
            WHERE id = \(id) AND app_id = \(app) AND provider_id = \(provider) AND deleted_at IS NULL
            RETURNING id
            """, logger: logger)
        for _ in rows { return true }
        return false
    }

    // MARK: Server API tokens

    func createToken(app: UUID, logger: Logger) async throws -> (id: UUID, token: String) {
        let id = UUID()
        let token = Secrets.randomToken()
        try await write(
            "INSERT INTO auth.app_tokens (id, app_id, token_hash) VALUES (\(id), \(app), \(Data(Secrets.hash(token))))",
            logger: logger)
        return (id, token)
    }

    func revokeToken(_ id: UUID, app: UUID, logger: Logger) async throws -> Bool {
        let rows = try await write(
            """
            UPDATE auth.app_tokens SET revoked_at = now()
            WHERE id = \(id) AND app_id = \(app) AND revoked_at IS NULL RETURNING id
            """, logger: logger)
        for _ in rows { return true }
        return false
    }

    /// True when `token` is a live Server API token of `app`.
    func isValidToken(_ token: String, app: UUID, logger: Logger) async throws -> Bool {
        let rows = try await postgres.query(
            """
            SELECT 1 FROM auth.app_tokens
            WHERE token_hash = \(Data(Secrets.hash(token))) AND app_id = \(app) AND revoked_at IS NULL
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
