import AsyncHTTPClient
import Crypto
import Foundation
import LayerAuth
import LayerModels
import LayerServer
import NIOSSL
import PostgresNIO
import SwiftASN1
import X509
import _CryptoExtras

/// A device as a test plays it: a P-256 key it keeps, and the PKCS#10 request it makes for it.
public struct TestDevice: Sendable {
    public let deviceID: String
    public let key: P256.Signing.PrivateKey

    public init(_ deviceID: String = "device-\(UUID().uuidString.prefix(8).lowercased())") {
        self.deviceID = deviceID
        key = P256.Signing.PrivateKey()
    }

    public var publicKey: Certificate.PublicKey { Certificate.PublicKey(key.publicKey) }

    public func csr() throws -> CertificateSigningRequest {
        try CertificateSigningRequest(
            version: .v1, subject: try DistinguishedName { CommonName(deviceID) },
            privateKey: Certificate.PrivateKey(key), attributes: .init(), signatureAlgorithm: .ecdsaWithSHA256)
    }

    public func csrPEM() throws -> String { try csr().serializeAsPEM().pemString }
}

/// What `POST /certificates` answered, read.
public struct IssuedDeviceCertificate: Sendable {
    public let id: LayerID
    public let pem: String
    public let thumbprint: String
    public let deviceID: String
    public let expiresAt: Date?

    public var certificate: Certificate { get throws { try Certificate(pemEncoded: pem) } }
    public var der: [UInt8] { get throws { try PEMDocument(pemString: pem).derBytes } }
    /// The form the edge proxy forwards in `X-Client-Certificate`.
    public var percentEncodedPEM: String { pem.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? pem }
}

/// Certificates, keys and HTTP clients for tests of mutual TLS.
public enum TestTLS {
    /// A self-signed certificate for 127.0.0.1 and its key, written as PEM files into a fresh
    /// temporary directory for `ServerSettings.tlsCertificatePath` / `tlsKeyPath`.
    public struct ServerIdentity: Sendable {
        public let directory: URL
        public let certificatePath: String
        public let keyPath: String
        public let certificate: NIOSSLCertificate

        public func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    public static func makeServerIdentity() throws -> ServerIdentity {
        let key = P256.Signing.PrivateKey()
        let certificate = try selfSigned(key: key, commonName: "127.0.0.1", usage: .serverAuth, ipAddress: [127, 0, 0, 1])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layerline-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificatePEM = try certificate.serializeAsPEM().pemString
        let certificatePath = directory.appendingPathComponent("server.pem").path
        let keyPath = directory.appendingPathComponent("server-key.pem").path
        try certificatePEM.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        return ServerIdentity(
            directory: directory, certificatePath: certificatePath, keyPath: keyPath,
            certificate: try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))
    }

    /// A self-signed certificate for `key`: a server's, or a client's that no CA of ours issued.
    public static func selfSigned(
        key: P256.Signing.PrivateKey, commonName: String, usage: ExtendedKeyUsage.Usage, ipAddress: [UInt8]? = nil
    ) throws -> Certificate {
        let name = try DistinguishedName { CommonName(commonName) }
        let now = Date()
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(24 * 3600),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                try ExtendedKeyUsage([usage])
                if let ipAddress { SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: ipAddress[...]))]) }
            },
            issuerPrivateKey: .init(key))
    }

    /// An HTTP client that trusts `server` (any host name) and, when given, presents a client
    /// certificate. The caller shuts it down.
    public static func client(
        trusting server: NIOSSLCertificate, certificatePEM: String? = nil, key: P256.Signing.PrivateKey? = nil
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([server])
        tls.certificateVerification = .noHostnameVerification
        if let certificatePEM, let key {
            tls.certificateChain = [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))]
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        }
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: .init(tlsConfiguration: tls))
    }

    /// Runs `body` with `client`, then shuts the client down whatever happened.
    public static func using<T: Sendable>(
        _ client: HTTPClient, _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

extension AuthFixture {
    /// `POST /certificates` with `csr`, which must succeed.
    public func certify(csr: String, via client: TestClient? = nil) async throws -> IssuedDeviceCertificate {
        let response = try await (client ?? self.client).request(.POST, "/certificates", json: ["csr": .string(csr)])
        guard response.status == 201, let json = response.json, let id = json["id"]?.stringValue,
            let layerID = LayerID(parsing: id, as: .certificates), let pem = json["certificate"]?.stringValue,
            let thumbprint = json["thumbprint"]?.stringValue, let deviceID = json["device_id"]?.stringValue
        else { throw FixtureError("POST /certificates answered \(response.status): \(response.text)") }
        return IssuedDeviceCertificate(
            id: layerID, pem: pem, thumbprint: thumbprint, deviceID: deviceID,
            expiresAt: json["expires_at"]?.stringValue.flatMap(LayerTimestamp.date))
    }

    /// Opens a session for `user` through `client` (another connection than the fixture's).
    public func openSession(user: String, via client: TestClient, headers: [(String, String)] = []) async throws -> TestResponse {
        try await client.request(
            .POST, "/sessions", headers: headers,
            json: ["identity_token": .string(try await identityToken(user: user)), "app_id": .string(app.uri)])
    }

    /// The PEM of the device CA, as stored in `auth.device_ca`.
    public func deviceCA() async throws -> Certificate {
        let rows = try await server.postgres.query("SELECT certificate_pem FROM auth.device_ca WHERE id = 1")
        for try await pem in rows.decode(String.self) { return try Certificate(pemEncoded: pem) }
        throw FixtureError("auth.device_ca is empty")
    }

    /// How many certificates were issued for `deviceID`, or at all (by every test sharing the database).
    public func certificateCount(deviceID: String? = nil) async throws -> Int {
        let rows =
            if let deviceID {
                try await server.postgres.query("SELECT count(*)::int8 FROM auth.certificates WHERE device_id = \(deviceID)")
            } else {
                try await server.postgres.query("SELECT count(*)::int8 FROM auth.certificates")
            }
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
