import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import PostgresNIO
import SwiftASN1
import Testing
import X509
import _CryptoExtras

/// Certify (`POST /certificates`) and sessions bound to the client certificate (DESIGN section 4),
/// over real mutual TLS and through the edge proxy's header.
/// Serialized, as the tests that send no device id count every row of `auth.certificates`.
@Suite(.serialized) struct CertificateTests {
    // MARK: Certify

    @Test func pkcs10RequestIsCertified() async throws {
        try await AuthFixture.run { auth in
            let device = TestDevice("device-1")
            let issued = try await auth.certify(csr: try device.csrPEM())
            #expect(issued.deviceID == "device-1")
            try expectDeviceCertificate(issued, of: device.publicKey, ca: try await auth.deviceCA())
        }
    }

    @Test func layerCSRIsCertified() async throws {
        try await AuthFixture.run { auth in
            let key = try TestKeys.key(3)
            let deviceID = UUID().uuidString.lowercased()
            let issued = try await auth.certify(csr: try Self.layerCSR(key: key, deviceID: deviceID))
            #expect(issued.deviceID == deviceID)
            try expectDeviceCertificate(issued, of: Certificate.PublicKey(key.publicKey), ca: try await auth.deviceCA())
            let rows = try await auth.server.postgres.query(
                "SELECT user_agent FROM auth.certificates WHERE thumbprint = \(issued.thumbprint)")
            var userAgents: [String?] = []
            for try await agent in rows.decode(String?.self) { userAgents.append(agent) }
            #expect(userAgents == ["TestAgent/1.0"])
        }
    }

    @Test(arguments: BadCSR.allCases) func badCSRIsRefused(_ bad: BadCSR) async throws {
        try await AuthFixture.run(settings: try await Self.isolated()) { auth in
            // Each request names a fresh device, so what it would have stored is found exactly.
            let deviceID = "bad-\(UUID().uuidString.lowercased())"
            let before = try await auth.certificateCount()
            let response = try await auth.client.request(
                .POST, "/certificates", json: ["csr": .string(try bad.text(deviceID: deviceID))])
            #expect(response.status == 422, "\(response.text)")
            #expect(response.errorID == "invalid_property")
            #expect(response.errorProperty == "csr")
            if let reason = bad.reason { #expect(response.errorReason == reason) }
            #expect(try await auth.certificateCount(deviceID: deviceID) == 0)
            if bad == .garbage { #expect(try await auth.certificateCount() == before) }
        }
    }

    /// A database of its own, so that counting every certificate counts this test's alone.
    static func isolated() async throws -> ServerSettings {
        ServerSettings(database: try await TestDatabase.isolated())
    }

    @Test func missingCSRIsMissingProperty() async throws {
        try await AuthFixture.run(settings: try await Self.isolated()) { auth in
            let before = try await auth.certificateCount()
            let response = try await auth.client.request(.POST, "/certificates", json: ["certificate": "x"])
            #expect(response.status == 422)
            #expect(response.errorID == "missing_property")
            #expect(response.errorProperty == "csr")
            #expect(try await auth.certificateCount() == before)
        }
    }

    @Test func bodyThatIsNotJSONIsRefused() async throws {
        try await AuthFixture.run(settings: try await Self.isolated()) { auth in
            let before = try await auth.certificateCount()
            let response = try await auth.client.request(.POST, "/certificates", body: ByteBuffer(string: "csr=abc"))
            #expect(response.status == 400)
            #expect(response.errorID == "invalid_request")
            #expect(try await auth.certificateCount() == before)
        }
    }

    // MARK: Mutual TLS

    @Test func mutualTLSBindsTheSessionToTheCertificate() async throws {
        let identity = try TestTLS.makeServerIdentity()
        defer { identity.remove() }
        try await AuthFixture.run(tlsIdentity: identity) { auth in
            #expect(auth.server.baseURL.hasPrefix("https://"))
            try await withCertifiedClient(auth, identity) { certified, _ in
                try await withCertifiedClient(auth, identity) { otherDevice, _ in
                    let opened = try await auth.openSession(user: "dora", via: certified)
                    #expect(opened.status == 201)
                    let token = try #require(opened.json?["session_token"]?.stringValue)
                    let bound = try await auth.current(token, via: certified)
                    #expect(bound.status == 200)
                    #expect(bound.json?["certificate_bound"] == .bool(true))

                    let withoutCertificate = try await auth.current(token, via: auth.client)
                    #expect(withoutCertificate.status == 401)
                    #expect(withoutCertificate.errorID == "authentication_required")
                    let withAnotherCertificate = try await auth.current(token, via: otherDevice)
                    #expect(withAnotherCertificate.status == 401)
                    #expect(withAnotherCertificate.errorID == "authentication_required")
                }
            }
        }
    }

    @Test func revokingTheCertificateEndsItsSessions() async throws {
        let identity = try TestTLS.makeServerIdentity()
        defer { identity.remove() }
        try await AuthFixture.run(tlsIdentity: identity) { auth in
            try await withCertifiedClient(auth, identity) { certified, issued in
                let opened = try await auth.openSession(user: "eve", via: certified)
                let token = try #require(opened.json?["session_token"]?.stringValue)
                #expect(try await auth.current(token, via: certified).status == 200)

                let revoke = try await auth.client.request(
                    .DELETE, "/admin/certificates/\(issued.id.uuid.lowercased)", headers: auth.operatorHeaders)
                #expect(revoke.status == 204)
                let after = try await auth.current(token, via: certified)
                #expect(after.status == 401)
                #expect(after.errorID == "authentication_required")
                let reopened = try await auth.openSession(user: "eve", via: certified)
                #expect(reopened.status == 403)
                #expect(reopened.errorID == "access_denied")
            }
        }
    }

    @Test func certificateFromAnotherIssuerFailsTheHandshake() async throws {
        let identity = try TestTLS.makeServerIdentity()
        defer { identity.remove() }
        try await AuthFixture.run(tlsIdentity: identity) { auth in
            let key = P256.Signing.PrivateKey()
            let foreign = try TestTLS.selfSigned(key: key, commonName: "intruder", usage: .clientAuth)
            let http = try TestTLS.client(
                trusting: identity.certificate, certificatePEM: try foreign.serializeAsPEM().pemString, key: key)
            try await TestTLS.using(http) { http in
                let intruder = TestClient(baseURL: auth.server.baseURL, http: http)
                await #expect(throws: (any Error).self) { _ = try await intruder.request(.POST, "/nonces") }
            }
            #expect(try await auth.client.request(.POST, "/nonces").status == 201)
        }
    }

    // MARK: The edge proxy's header

    @Test func trustedProxyHeaderBindsTheSession() async throws {
        try await AuthFixture.run(settings: Self.settings(trustedProxies: ["127.0.0.1"])) { auth in
            let forwarded = try await Self.forwardedCertificate(auth)
            let opened = try await auth.createSession(token: try await auth.identityToken(user: "finn"), headers: forwarded)
            #expect(opened.status == 201)
            let token = try #require(opened.json?["session_token"]?.stringValue)
            let withHeader = try await auth.current(token, via: auth.client, headers: forwarded)
            #expect(withHeader.status == 200)
            #expect(withHeader.json?["certificate_bound"] == .bool(true))
            let withoutHeader = try await auth.current(token, via: auth.client)
            #expect(withoutHeader.status == 401)
            #expect(withoutHeader.errorID == "authentication_required")
        }
    }

    @Test(
        "Behind ingress-nginx the certificate comes in ssl-client-cert (LAYER_CLIENT_CERTIFICATE_HEADER); the default header is then ignored"
    )
    func configuredCertificateHeader() async throws {
        var settings = Self.settings(trustedProxies: ["127.0.0.0/8"])
        settings.clientCertificateHeader = HTTPField.Name("ssl-client-cert")!
        try await AuthFixture.run(settings: settings) { auth in
            let certificate = try await Self.forwardedCertificate(auth)[0].1
            let ingress = [("ssl-client-cert", certificate)]
            let opened = try await auth.createSession(token: try await auth.identityToken(user: "hana"), headers: ingress)
            let token = try #require(opened.json?["session_token"]?.stringValue)
            let current = try await auth.current(token, via: auth.client, headers: ingress)
            #expect(current.status == 200)
            #expect(current.json?["certificate_bound"] == .bool(true))
            #expect(try await auth.current(token, via: auth.client).status == 401)

            let unbound = try await auth.createSession(
                token: try await auth.identityToken(user: "ines"), headers: [("X-Client-Certificate", certificate)])
            let other = try #require(unbound.json?["session_token"]?.stringValue)
            #expect(try await auth.current(other, via: auth.client).json?["certificate_bound"] == .bool(false))
        }
    }

    @Test func headerFromUntrustedAddressIsIgnored() async throws {
        try await AuthFixture.run(settings: Self.settings(trustedProxies: [])) { auth in
            let forwarded = try await Self.forwardedCertificate(auth)
            let opened = try await auth.createSession(token: try await auth.identityToken(user: "gail"), headers: forwarded)
            #expect(opened.status == 201)
            let token = try #require(opened.json?["session_token"]?.stringValue)
            for headers in [[], forwarded] {
                let answer = try await auth.current(token, via: auth.client, headers: headers)
                #expect(answer.status == 200)
                #expect(answer.json?["certificate_bound"] == .bool(false))
            }
        }
    }

    @Test func appCanRequireCertifiedConnections() async throws {
        try await AuthFixture.run(settings: Self.settings(trustedProxies: ["127.0.0.1"])) { auth in
            let patch = try await auth.client.request(
                .PATCH, "/admin/apps/\(auth.app.id.lowercased)", headers: auth.operatorHeaders,
                json: ["require_certified_connections": true])
            #expect(patch.status == 200)
            #expect(patch.json?["require_certified_connections"] == .bool(true))

            let refused = try await auth.createSession(token: try await auth.identityToken(user: "hank"))
            #expect(refused.status == 403)
            #expect(refused.errorID == "access_denied")
            let forwarded = try await Self.forwardedCertificate(auth)
            let accepted = try await auth.createSession(token: try await auth.identityToken(user: "hank"), headers: forwarded)
            #expect(accepted.status == 201)
        }
    }

    @Test(
        "Renewing a challenged session of an app that requires certified connections binds it to the certificate presented; without one the renewal is refused"
    )
    func renewalUnderRequiredCertificationBindsTheCertificate() async throws {
        let identity = try TestTLS.makeServerIdentity()
        defer { identity.remove() }
        try await AuthFixture.run(tlsIdentity: identity) { auth in
            // A session opened before the app required certified connections, bound to nothing.
            let session = try await auth.session(user: "ivy")
            #expect(try await auth.current(session).json?["certificate_bound"] == .bool(false))
            let app = auth.app.id.lowercased
            let required = try await auth.client.request(
                .PATCH, "/admin/apps/\(app)", headers: auth.operatorHeaders, json: ["require_certified_connections": true])
            #expect(required.status == 200)
            let challenged = try await auth.client.request(
                .POST, "/admin/apps/\(app)/users/ivy/challenge", headers: auth.operatorHeaders)
            #expect(challenged.status == 204)
            #expect(try await auth.current(session).status == 401)

            try await withCertifiedClient(auth, identity) { certified, _ in
                let renewal = { (client: TestClient) in
                    try await client.request(
                        .POST, "/sessions", headers: AuthFixture.sessionHeader(session),
                        json: [
                            "identity_token": .string(try await auth.identityToken(user: "ivy")), "app_id": .string(auth.app.uri),
                        ])
                }
                let refused = try await renewal(auth.client)
                #expect(refused.status == 403, "\(refused.text)")
                #expect(refused.errorID == "access_denied")
                #expect(refused.errorReason == "certificate_required")
                #expect(try await auth.current(session, via: certified).status == 401, "a refused renewal renews nothing")

                let renewed = try await renewal(certified)
                #expect(renewed.status == 201, "\(renewed.text)")
                #expect(renewed.json?["session_token"]?.stringValue == session)
                let bound = try await auth.current(session, via: certified)
                #expect(bound.status == 200)
                #expect(bound.json?["certificate_bound"] == .bool(true))
                let withoutCertificate = try await auth.current(session)
                #expect(withoutCertificate.status == 401)
                #expect(withoutCertificate.errorID == "authentication_required")
            }
        }
    }

    @Test("Renewing a session over another device's certificate moves its binding to that certificate")
    func renewalOverAnotherCertificateRebinds() async throws {
        try await AuthFixture.run(settings: Self.settings(trustedProxies: ["127.0.0.1"])) { auth in
            let first = try await Self.forwardedCertificate(auth)
            let second = try await Self.forwardedCertificate(auth)
            let opened = try await auth.createSession(token: try await auth.identityToken(user: "jo"), headers: first)
            let session = try #require(opened.json?["session_token"]?.stringValue)
            let renewed = try await auth.createSession(
                token: try await auth.identityToken(user: "jo"), headers: AuthFixture.sessionHeader(session) + second)
            #expect(renewed.status == 201)
            #expect(renewed.json?["session_token"]?.stringValue == session)
            #expect(try await auth.current(session, headers: second).json?["certificate_bound"] == .bool(true))
            #expect(try await auth.current(session, headers: first).status == 401)
        }
    }

    // MARK: Helpers

    /// The checks every issued device certificate must pass.
    private func expectDeviceCertificate(
        _ issued: IssuedDeviceCertificate, of publicKey: Certificate.PublicKey, ca: Certificate
    ) throws {
        let certificate = try issued.certificate
        #expect(issued.id.collection == .certificates)
        #expect(certificate.version == .v3)
        #expect(try certificate.extensions.extendedKeyUsage?.contains(.clientAuth) == true)
        #expect(try certificate.extensions.basicConstraints == .notCertificateAuthority)
        #expect(certificate.notValidBefore <= Date())
        #expect(certificate.notValidAfter.timeIntervalSinceNow >= 4 * 365 * 24 * 3600)
        let expiresAt = try #require(issued.expiresAt)
        #expect(abs(expiresAt.timeIntervalSince(certificate.notValidAfter)) < 1)
        #expect(ca.subject.description.contains("Layerline Device CA"))
        #expect(certificate.issuer == ca.subject)
        #expect(ca.publicKey.isValidSignature(certificate.signature, for: certificate))
        #expect(certificate.publicKey == publicKey)
        let digest = Data(SHA256.hash(data: try issued.der)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(issued.thumbprint == digest)
    }

    /// Certifies a new device over the fixture's connection (no client certificate), then runs
    /// `body` with a client that presents the new certificate.
    private func withCertifiedClient(
        _ auth: AuthFixture, _ identity: TestTLS.ServerIdentity,
        _ body: (TestClient, IssuedDeviceCertificate) async throws -> Void
    ) async throws {
        let device = TestDevice()
        let issued = try await auth.certify(csr: try device.csrPEM())
        let http = try TestTLS.client(trusting: identity.certificate, certificatePEM: issued.pem, key: device.key)
        try await TestTLS.using(http) { http in
            try await body(TestClient(baseURL: auth.server.baseURL, http: http), issued)
        }
    }

    private static func settings(trustedProxies: TrustedProxies) -> ServerSettings {
        ServerSettings(trustedProxies: trustedProxies)
    }

    /// A new device certificate in the `X-Client-Certificate` header, as the edge proxy sends it.
    private static func forwardedCertificate(_ auth: AuthFixture) async throws -> [(String, String)] {
        let issued = try await auth.certify(csr: try TestDevice().csrPEM())
        return [("X-Client-Certificate", issued.percentEncodedPEM)]
    }

    /// A Layer CSR: a JWS carrying `key`'s public key, signed by `signer` (by default `key`).
    static func layerCSR(
        key: _RSA.Signing.PrivateKey, signedBy signer: _RSA.Signing.PrivateKey? = nil,
        deviceID: String = UUID().uuidString.lowercased(),
        header: [String: JSONValue] = [:], claims: [String: JSONValue] = [:]
    ) throws -> String {
        let standardHeader: [String: JSONValue] = ["typ": "JWS", "alg": "RS256", "cty": "layer-csr;v=1"]
        let payload: [String: JSONValue] = [
            "uat": "TestAgent/1.0", "prn": .string(deviceID), "pka": "RSA",
            "pky": .string(Data(key.publicKey.derRepresentation).base64EncodedString()),
        ]
        return try IdentityTokenSigner.sign(
            header: standardHeader.merging(header) { $1 }, claims: payload.merging(claims) { $1 }, with: signer ?? key)
    }

    /// Requests the service must refuse, with the `eit_*` reason where the Layer CSR has one.
    enum BadCSR: String, CaseIterable, Sendable {
        case garbage, certificateInsteadOfRequest, tamperedPKCS10Signature
        case layerSignedByAnotherKey, layerECKeyAlgorithm, layerKeyNotAKey, layerWrongContentType

        func text(deviceID: String) throws -> String {
            switch self {
            case .garbage:
                return "this is not a certificate request"
            case .certificateInsteadOfRequest:
                let key = P256.Signing.PrivateKey()
                return try TestTLS.selfSigned(key: key, commonName: deviceID, usage: .clientAuth).serializeAsPEM().pemString
            case .tamperedPKCS10Signature:
                // The signature BIT STRING ends the DER; its last byte is the last byte of ECDSA's s.
                var der = try PEMDocument(pemString: try TestDevice(deviceID).csrPEM()).derBytes
                der[der.count - 1] ^= 0x01
                return PEMDocument(type: "CERTIFICATE REQUEST", derBytes: der).pemString
            case .layerSignedByAnotherKey:
                return try layerCSR(key: try TestKeys.key(3), signedBy: try TestKeys.key(4), deviceID: deviceID)
            case .layerECKeyAlgorithm:
                return try layerCSR(key: try TestKeys.key(3), deviceID: deviceID, claims: ["pka": "EC"])
            case .layerKeyNotAKey:
                let notAKey = Data("not a key".utf8).base64EncodedString()
                return try layerCSR(key: try TestKeys.key(3), deviceID: deviceID, claims: ["pky": .string(notAKey)])
            case .layerWrongContentType:
                return try layerCSR(key: try TestKeys.key(3), deviceID: deviceID, header: ["cty": "layer-eit;v=1"])
            }
        }

        var reason: String? {
            switch self {
            case .garbage: "eit_wrong_jws_part_count"
            case .certificateInsteadOfRequest, .tamperedPKCS10Signature: nil
            case .layerSignedByAnotherKey: "eit_signature_verification_failed"
            case .layerECKeyAlgorithm: "eit_claim_wrong_type"
            case .layerKeyNotAKey: "eit_key_malformed"
            case .layerWrongContentType: "eit_header_param_wrong_value"
            }
        }
    }
}
