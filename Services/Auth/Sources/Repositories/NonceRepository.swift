import Foundation
import LayerServer
import Logging
import PostgresNIO

/// Nonces: 256 random bits, URL-safe, valid for ten minutes. A nonce is spent (deleted) by the
/// statement that opens a session with it: ``SessionRepository/openSession``.
struct NonceRepository: PostgresRepository {
    let postgres: PostgresClient
    static let lifetime: TimeInterval = 600

    func create(logger: Logger) async throws -> String {
        let nonce = Secrets.randomToken()
        let expiresAt = Date().addingTimeInterval(Self.lifetime)
        try await write(
            "INSERT INTO auth.nonces (nonce, expires_at) VALUES (\(nonce), \(expiresAt))", logger: logger)
        return nonce
    }

    func deleteExpired(logger: Logger) async throws {
        try await write("DELETE FROM auth.nonces WHERE expires_at <= now()", logger: logger)
    }
}
