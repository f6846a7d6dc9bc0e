import Crypto
import Foundation
import LayerModels
import LayerServer
import Logging
import SwiftASN1
import Synchronization
import X509

/// Issues and checks device certificates with the suite's CA, which ``prepare(logger:)`` loads
/// (from files, or from the database, generating and storing it on first start).
final class CertificateIssuer: Sendable {
    enum Source: Sendable {
        /// Kept in the database, its key sealed with this secret.
        case database(secret: String)
        /// Read from mounted PEM files.
        case files(certificate: String, key: String)
    }

    let repository: CertificateRepository
    let source: Source
    private let ca = Mutex<DeviceCA?>(nil)

    init(repository: CertificateRepository, source: Source) {
        self.repository = repository
        self.source = source
    }

    func prepare(logger: Logger) async throws {
        let loaded: DeviceCA
        switch source {
        case .files(let certificatePath, let keyPath):
            loaded = try DeviceCA.load(
                certificatePEM: String(contentsOfFile: certificatePath, encoding: .utf8),
                privateKeyPEM: String(contentsOfFile: keyPath, encoding: .utf8))
        case .database(let secret):
            if let stored = try await repository.storedCA(logger: logger) {
                loaded = try DeviceCA.unseal(certificatePEM: stored.certificatePEM, sealedKey: stored.sealedKey, secret: secret)
            } else {
                let generated = try DeviceCA.generate()
                let stored = try await repository.storeCA(
                    certificatePEM: generated.certificatePEM, sealedKey: generated.sealedKey(secret: secret), logger: logger)
                loaded = try DeviceCA.unseal(certificatePEM: stored.certificatePEM, sealedKey: stored.sealedKey, secret: secret)
                logger.info("Generated the device CA")
            }
        }
        ca.withLock { $0 = loaded }
    }

    var authority: DeviceCA {
        get throws {
            guard let authority = ca.withLock({ $0 }) else {
                throw APIError(.serviceUnavailable, "The device CA is not loaded yet.")
            }
            return authority
        }
    }

    struct Issued: Sendable {
        var id: UUID
        var record: IssuedCertificate

        struct Response: Codable {
            var id: String
            var certificate: String
            var thumbprint: String
            var deviceID: String
            var expiresAt: Date
            enum CodingKeys: String, CodingKey {
                case id, certificate, thumbprint
                case deviceID = "device_id"
                case expiresAt = "expires_at"
            }
        }

        var response: Response {
            Response(
                id: LayerID(.certificates, id).uri, certificate: record.pem, thumbprint: record.thumbprint,
                deviceID: record.deviceID, expiresAt: record.expiresAt)
        }
    }

    func certify(_ request: CertificateRequest, logger: Logger) async throws -> Issued {
        let authority = try authority
        let certificate = try authority.issue(publicKey: request.publicKey, deviceID: request.deviceID)
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let record = IssuedCertificate(
            id: UUID(), serial: certificate.serialNumber.description,
            thumbprint: ClientCertificateReader.thumbprint(der: serializer.serializedBytes),
            deviceID: request.deviceID, userAgent: request.userAgent,
            pem: try certificate.serializeAsPEM().pemString, expiresAt: certificate.notValidAfter)
        try await repository.insert(record, logger: logger)
        return Issued(id: record.id, record: record)
    }

    /// For the TLS handshake: is the presented leaf a certificate this CA signed, within its
    /// validity? (Revocation is checked per session, so a revoked device's sessions end at once.)
    func isIssuedByUs(der: [UInt8], now: Date = Date()) -> Bool {
        guard let authority = try? authority, let leaf = try? Certificate(derEncoded: der) else { return false }
        return leaf.issuer == authority.certificate.subject
            && authority.certificate.publicKey.isValidSignature(leaf.signature, for: leaf)
            && leaf.notValidBefore <= now && now <= leaf.notValidAfter
    }
}
