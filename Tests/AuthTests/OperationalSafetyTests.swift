import Crypto
import Foundation
import LayerAuth
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing
import X509

/// Secrets stay out of logs; the device CA can come from mounted files; the probes and metrics
/// answer.
@Suite struct OperationalSafetyTests {
    @Test func noSecretEverReachesTheLogs() async throws {
        let capture = LogCapture()
        let secrets = try await AuthFixture.run(logger: capture.logger(level: .trace), withSync: SyncSettings()) { auth in
            let identityToken = try await auth.identityToken(user: "quinn")
            let created = try await auth.createSession(token: identityToken)
            let session = try #require(created.json?["session_token"]?.stringValue)
            _ = try await auth.client.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(session))
            _ = try await auth.createSession(token: identityToken)  // refused: the nonce is spent
            let serverToken = try await auth.serverAPIToken()
            _ = try await auth.client.request(
                .GET, "/apps/\(auth.app.id.lowercased)/users/quinn", headers: [("Authorization", "Bearer \(serverToken)")])
            _ = try await auth.client.request(
                .POST, "/internal/v1/introspect", headers: [("Authorization", "Bearer \(auth.internalTokens.token(of: "sync"))")],
                json: ["token": .string(session)])
            _ = try await auth.client.request(.DELETE, "/sessions/\(session)")
            _ = try await auth.client.request(.DELETE, "/sessions/\(session)")  // 404 now
            return [identityToken, session, serverToken, auth.operatorToken] + auth.internalTokens.byService.values
        }
        let logs = capture.text
        #expect(logs.contains("Applying migration") || logs.contains("Server started"), "the capture saw the service's logs")
        for secret in secrets {
            #expect(!logs.contains(secret), "a secret appears in the logs")
        }
    }

    @Test func theDeviceCACanBeReadFromFiles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Operator CA") }
        let caCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-60), notValidAfter: Date().addingTimeInterval(86_400 * 3650),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            }, issuerPrivateKey: .init(key))
        let certificatePath = directory.appendingPathComponent("ca.pem").path
        let keyPath = directory.appendingPathComponent("ca.key").path
        try caCertificate.serializeAsPEM().pemString.write(toFile: certificatePath, atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)

        try await AuthFixture.run(caSource: .files(certificate: certificatePath, key: keyPath)) { auth in
            let issued = try await auth.certify(csr: try TestDevice().csrPEM())
            let certificate = try issued.certificate
            #expect(certificate.issuer == caCertificate.subject)
            #expect(caCertificate.publicKey.isValidSignature(certificate.signature, for: certificate))
        }
    }

    @Test func probesMetricsAndDiscoveryAnswer() async throws {
        try await AuthFixture.run { auth in
            let live = try await auth.client.request(.GET, "/health/live")
            #expect(live.status == 200 && live.json?["status"] == "ok")
            let ready = try await auth.client.request(.GET, "/health/ready")
            #expect(ready.status == 200 && ready.json?["checks"]?["database"] == "ok")
            _ = try await auth.nonce()
            let metrics = try await auth.client.request(.GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("hb_requests"))
            let root = try await auth.client.request(.GET, "/")
            #expect(root.headers.first(name: "Link")?.contains("/nonces>; rel=nonces") == true)
            #expect(root.headers.first(name: "Link")?.contains("/sessions>; rel=sessions") == true)
        }
    }
}
