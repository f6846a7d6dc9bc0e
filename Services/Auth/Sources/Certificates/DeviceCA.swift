import Crypto
import Foundation
import LayerServer
import SwiftASN1
import X509

/// The suite's device certificate authority: a P-256 key and a self-signed CA certificate that
/// issues long-lived client-authentication certificates to devices.
struct DeviceCA: Sendable {
    let certificate: Certificate
    let privateKey: P256.Signing.PrivateKey

    /// Device certificates live for years; a device certifies again when one is revoked.
    static let deviceCertificateLifetime: TimeInterval = 5 * 365 * 24 * 3600

    var certificatePEM: String { get throws { try certificate.serializeAsPEM().pemString } }

    /// A new CA, valid for twenty years.
    static func generate(now: Date = Date()) throws -> DeviceCA {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let name = try DistinguishedName {
            OrganizationName("Layerline")
            CommonName("Layerline Device CA")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(20 * 365 * 24 * 3600),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: .init(key))
        return DeviceCA(certificate: certificate, privateKey: key)
    }

    /// Reads a CA from PEM files (certificate, and a PKCS#8 or SEC1 P-256 private key).
    static func load(certificatePEM: String, privateKeyPEM: String) throws -> DeviceCA {
        let certificate = try Certificate(pemEncoded: certificatePEM)
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        guard Certificate.PublicKey(key.publicKey) == certificate.publicKey else {
            throw DeviceCAError.keyDoesNotMatchCertificate
        }
        return DeviceCA(certificate: certificate, privateKey: key)
    }

    /// Issues a client certificate for `publicKey`, named after the device.
    func issue(
        publicKey: Certificate.PublicKey, deviceID: String, now: Date = Date()
    ) throws -> Certificate {
        let subject = try DistinguishedName {
            OrganizationName("Layerline device")
            CommonName(deviceID)
        }
        let issuerKeyID = try certificate.extensions.subjectKeyIdentifier?.keyIdentifier
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-300), notValidAfter: now.addingTimeInterval(Self.deviceCertificateLifetime),
            issuer: certificate.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, keyEncipherment: true))
                try ExtendedKeyUsage([.clientAuth])
                SubjectKeyIdentifier(hash: publicKey)
                if let issuerKeyID { AuthorityKeyIdentifier(keyIdentifier: issuerKeyID) }
            },
            issuerPrivateKey: .init(privateKey))
    }

    // MARK: Keeping the key at rest

    /// The private key sealed with AES-256-GCM under a key derived from the configured secret.
    func sealedKey(secret: String) throws -> Data {
        try AES.GCM.seal(privateKey.rawRepresentation, using: Self.sealingKey(secret)).combined!
    }

    static func unseal(certificatePEM: String, sealedKey: Data, secret: String) throws -> DeviceCA {
        let box = try AES.GCM.SealedBox(combined: sealedKey)
        let raw: Data
        do {
            raw = try AES.GCM.open(box, using: sealingKey(secret))
        } catch {
            throw DeviceCAError.wrongSecret
        }
        let key = try P256.Signing.PrivateKey(rawRepresentation: raw)
        return DeviceCA(certificate: try Certificate(pemEncoded: certificatePEM), privateKey: key)
    }

    private static func sealingKey(_ secret: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), salt: Data("layerline-device-ca".utf8),
            info: Data("ca-key-v1".utf8), outputByteCount: 32)
    }
}

enum DeviceCAError: Error, CustomStringConvertible {
    case keyDoesNotMatchCertificate
    case wrongSecret

    var description: String {
        switch self {
        case .keyDoesNotMatchCertificate: "the device CA key does not match its certificate"
        case .wrongSecret: "the stored device CA key cannot be opened with LAYER_CA_KEY_SECRET"
        }
    }
}
