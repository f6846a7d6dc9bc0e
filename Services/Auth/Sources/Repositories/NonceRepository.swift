import Foundation
import LayerServer
import Logging
import PostgresNIO

/// Nonces: 256 random bits, URL-safe, valid for ten minutes, spent at most once.
struct NonceRepository: Sendable {
    let client: PostgresClient
    static let lifetime: TimeInterval = 600

    func create(logger: Logger) async throws -> String {
        let nonce = Secrets.randomToken()
        let expiresAt = Date().addingTimeInterval(Self.lifetime)
        try await client.query(
            "INSERT INTO auth.nonces (nonce, expires_at) VALUES (\(nonce), \(expiresAt))", logger: logger)
        return nonce
    }

    /// Spends `nonce` inside the caller's transaction. Deleting the row is the spend, so of any
    /// number of concurrent attempts exactly one sees it.
    func spend(_ nonce: String, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "DELETE FROM auth.nonces WHERE nonce = \(nonce) AND expires_at > now() RETURNING 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    func deleteExpired(logger: Logger) async throws {
        try await client.query("DELETE FROM auth.nonces WHERE expires_at <= now()", logger: logger)
    }
}
