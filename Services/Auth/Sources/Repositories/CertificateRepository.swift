import Foundation
import LayerServer
import Logging
import PostgresNIO

struct IssuedCertificate: Sendable {
    var id: UUID
    var serial: String
    var thumbprint: String
    var deviceID: String
    var userAgent: String?
    var pem: String
    var expiresAt: Date
}

/// The device CA (its key sealed) and the certificates it issued, found by thumbprint.
struct CertificateRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The stored CA, if one was made before.
    func storedCA(logger: Logger) async throws -> (certificatePEM: String, sealedKey: Data)? {
        let rows = try await postgres.query("SELECT certificate_pem, sealed_key FROM auth.device_ca WHERE id = 1", logger: logger)
        for try await row in rows.decode((String, Data).self) { return (row.0, row.1) }
        return nil
    }

    /// Stores a new CA unless another replica stored one first; either way returns the one kept.
    func storeCA(certificatePEM: String, sealedKey: Data, logger: Logger) async throws -> (
        certificatePEM: String, sealedKey: Data
    ) {
        try await write(
            """
            INSERT INTO auth.device_ca (id, certificate_pem, sealed_key) VALUES (1, \(certificatePEM), \(sealedKey))
            ON CONFLICT (id) DO NOTHING
            """, logger: logger)
        guard let stored = try await storedCA(logger: logger) else {
            throw APIError(.internalServerError, "The device CA could not be stored.")
        }
        return stored
    }

    func insert(_ certificate: IssuedCertificate, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO auth.certificates (id, serial, thumbprint, device_id, user_agent, certificate_pem, expires_at)
            VALUES (\(certificate.id), \(certificate.serial), \(certificate.thumbprint), \(certificate.deviceID),
                    \(certificate.userAgent), \(certificate.pem), \(certificate.expiresAt))
            """, logger: logger)
    }

    enum Status: Sendable, Equatable {
        case valid
        case revoked
        case expired
    }

    /// The status of a certificate this CA issued; nil for one it did not.
    func status(thumbprint: String, logger: Logger) async throws -> Status? {
        let rows = try await postgres.query(
            "SELECT revoked_at IS NOT NULL, expires_at FROM auth.certificates WHERE thumbprint = \(thumbprint)",
            logger: logger)
        for try await (revoked, expiresAt) in rows.decode((Bool, Date).self) {
            if revoked { return .revoked }
            return expiresAt <= Date() ? .expired : .valid
        }
        return nil
    }

    /// A session bound to a certificate: whose it is, and the hash of its token.
    struct BoundSession: Sendable {
        var app: UUID
        var user: String
        var tokenHash: Data
    }

    /// Revokes a certificate; the sessions bound to it, which stop working, or nil when there is no
    /// such certificate or it was revoked before.
    func revoke(_ id: UUID, logger: Logger) async throws -> [BoundSession]? {
        let rows = try await write(
            """
            WITH revoked AS (
                UPDATE auth.certificates SET revoked_at = now() WHERE id = \(id) AND revoked_at IS NULL
                RETURNING thumbprint)
            SELECT s.app_id, s.user_id, s.token_hash
            FROM revoked LEFT JOIN auth.sessions s ON s.certificate_thumbprint = revoked.thumbprint
            """, logger: logger)
        var found = false
        var bound: [BoundSession] = []
        for row in rows {
            let (app, user, hash) = try row.decode((UUID?, String?, Data?).self)
            found = true
            if let app, let user, let hash { bound.append(BoundSession(app: app, user: user, tokenHash: hash)) }
        }
        return found ? bound : nil
    }
}
