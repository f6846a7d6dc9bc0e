import Crypto
import Foundation
import LayerAuth
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import NIOHTTP1
import Testing
import X509

/// The auth service against its own `GET /openapi.yaml` (DESIGN section 3): the document lists
/// exactly the public routes, every documented route is routed, and the real responses of
/// realistic flows have a documented status, the required headers and a body of the documented
/// schema. The document's schemas forbid undocumented properties, so drift fails here.
@Suite struct OpenAPIConformanceTests {
    /// A client of the auth service that checks every response it gets against the document.
    struct Checked: CheckedAPI {
        let auth: AuthFixture
        let document: OpenAPIDocument

        var client: TestClient { auth.client }

        func uuid(_ response: TestResponse, _ collection: LayerID.Collection) throws -> String {
            try #require(response.json?["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: collection) }).uuid.lowercased
        }
    }

    static func withDocument(
        rateLimits: RateLimits? = nil, _ body: @escaping @Sendable (Checked) async throws -> Void
    ) async throws {
        let run: @Sendable (AuthFixture) async throws -> Void = { auth in
            let served = try await auth.client.request(.GET, "/openapi.yaml", accept: nil)
            #expect(served.status == 200)
            try await body(Checked(auth: auth, document: try OpenAPIDocument(yaml: served.text)))
        }
        if let rateLimits {
            try await AuthFixture.run(rateLimits: rateLimits, run)
        } else {
            try await AuthFixture.run(run)
        }
    }

    static let publicOperations: Set<String> = [
        "get /", "get /ping", "post /nonces", "post /sessions", "get /sessions/current", "delete /sessions/{token}",
        "post /certificates", "post /admin/apps", "get /admin/apps/{app}", "patch /admin/apps/{app}",
        "post /admin/apps/{app}/providers", "post /admin/apps/{app}/providers/{provider}/keys",
        "patch /admin/apps/{app}/providers/{provider}/keys/{key}",
        "delete /admin/apps/{app}/providers/{provider}/keys/{key}", "post /admin/apps/{app}/tokens",
        "delete /admin/apps/{app}/tokens/{token}", "post /admin/apps/{app}/users/{user}/challenge",
        "delete /admin/certificates/{certificate}", "get /admin/apps/{app}/push", "put /admin/apps/{app}/push/{provider}",
        "delete /admin/apps/{app}/push/{provider}", "patch /apps/{app}", "get /health/live", "get /health/ready", "get /metrics",
        "get /openapi.yaml",
    ]

    @Test func documentListsThePublicRoutesWithTheSharedErrorShape() async throws {
        try await Self.withDocument { api in
            let document = api.document
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1.") == true)
            #expect(document.operationNames == Self.publicOperations)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectSharedResponseShapes()
        }
    }

    /// Calls every documented operation with its parameters' examples and no credentials: none is
    /// an unknown endpoint, every answer is documented, and exactly the operations that document
    /// 406 refuse a request without `Accept`.
    @Test func everyDocumentedRouteIsRouted() async throws {
        try await Self.withDocument { api in
            try await api.callEveryOperation()
        }
    }

    @Test func clientAPIResponsesMatchTheDocument() async throws {
        try await Self.withDocument { api in
            let auth = api.auth
            let nonce = try await api.call(.POST, "/nonces", 201)
            let token = try auth.app.signer.token(
                userID: "olive", nonce: try #require(nonce.json?["nonce"]?.stringValue), extraClaims: ["display_name": "Olive"])
            let body: JSONValue = ["identity_token": .string(token), "app_id": .string(auth.app.uri)]
            let created = try await api.call(.POST, "/sessions", 201, json: body)
            let session = try #require(created.json?["session_token"]?.stringValue)
            #expect(try await api.call(.POST, "/sessions", 422, json: body).errorReason == "eit_nonce_not_found")
            #expect(
                try await api.call(.POST, "/sessions", 422, json: ["app_id": .string(auth.app.uri)]).errorID == "missing_property"
            )
            #expect(
                try await api.call(.POST, "/sessions", 403, json: ["identity_token": "x", "app_id": "nope"]).errorID
                    == "invalid_app_id")
            let huge: JSONValue = [
                "identity_token": .string(String(repeating: "a", count: 20_000)), "app_id": .string(auth.app.uri),
            ]
            try await api.call(.POST, "/sessions", 413, json: huge)
            let notJSON = try await auth.client.request(.POST, "/sessions", body: ByteBuffer(string: "{nope"))
            api.check(notJSON, "POST", "/sessions", 400)
            try await api.call(.POST, "/nonces", 406, accept: nil)
            #expect(
                try await api.call(.POST, "/nonces", 406, accept: "application/vnd.layer+json; version=4.0").json?["data"]?[
                    "header"] == "Accept")

            // What the router does not serve is not in the document either, and errs in its shape:
            // 405 with `Allow` for a path served with other methods, 404 for one not served at all.
            try await api.expectUnserved([
                (.GET, "/nonce", 404), (.GET, "/nonces", 405), (.PUT, "/sessions/current", 405),
                (.POST, "/internal/v1/nonces/x", 404),
            ]) { status, response in
                #expect((response.headers.first(name: "Allow") != nil) == (status == 405))
            }

            let current = try await api.call(.GET, "/sessions/current", 200, headers: AuthFixture.sessionHeader(session))
            #expect(current.json?["identity"]?["display_name"] == "Olive")
            #expect(current.json?["certificate_bound"] == false)
            try await api.call(.GET, "/sessions/current", 401)
            try await api.call(.GET, "/sessions/current", 401, headers: AuthFixture.sessionHeader("no-such-session"))
            try await api.call(.GET, "/sessions/current", 401, headers: [("Authorization", "Basic b2xpdmU6cHc=")])
            try await api.call(.GET, "/sessions/current", 406, headers: AuthFixture.sessionHeader(session), accept: nil)
            let inlineToken = try await auth.identityToken(user: "olive")
            let inline = try await api.call(
                .GET, "/sessions/current", 200, headers: [("Authorization", "Layer identity-token=\"\(inlineToken)\"")])
            #expect(inline.headers.first(name: "X-Layer-User-ID") == "olive")
            #expect(inline.headers.first(name: "X-Layer-Session-Token") != nil)
            try await api.call(.GET, "/sessions/current", 422, headers: [("Authorization", "Layer identity-token=\"a.b\"")])

            try await api.call(.DELETE, "/sessions/\(session)", 204)
            try await api.call(.DELETE, "/sessions/\(session)", 404)
            try await api.call(.DELETE, "/sessions/\(session)", 406, accept: nil)

            let csr = try CertificateSigningRequest(
                version: .v1, subject: try DistinguishedName { CommonName("device-1") },
                privateKey: .init(P256.Signing.PrivateKey()), attributes: .init(), signatureAlgorithm: .ecdsaWithSHA256)
            let issued = try await api.call(
                .POST, "/certificates", 201, json: ["csr": .string(try csr.serializeAsPEM().pemString)])
            #expect(issued.json?["device_id"] == "device-1")
            let broken = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----"
            #expect(try await api.call(.POST, "/certificates", 422, json: ["csr": .string(broken)]).errorProperty == "csr")
            try await api.call(.POST, "/certificates", 422, json: ["csr": "not.a.jws"])
            try await api.call(.POST, "/certificates", 422, json: [:])
            let certificate = try api.uuid(issued, .certificates)
            try await api.call(.DELETE, "/admin/certificates/\(certificate)", 204, headers: auth.operatorHeaders)
            try await api.call(.DELETE, "/admin/certificates/\(certificate)", 404, headers: auth.operatorHeaders)

            let root = try await api.call(.GET, "/", 200, accept: nil)
            #expect(root.headers.first(name: "Link")?.contains("/nonces>; rel=nonces") == true)
            for path in ["/health/live", "/health/ready", "/metrics", "/openapi.yaml"] {
                try await api.call(.GET, path, 200, accept: nil)
            }
        }
    }

    @Test func rateLimitedRoutesAnswer429AsDocumented() async throws {
        let one = RateLimiter.Limit(rate: 0.001, burst: 1)
        try await Self.withDocument(rateLimits: .init(nonces: one, sessions: one, certificates: one)) { api in
            try await api.call(.POST, "/nonces", 201)
            try await api.call(.POST, "/nonces", 429)
            try await api.call(.POST, "/certificates", 400)
            try await api.call(.POST, "/certificates", 429, json: ["csr": "x"])
        }
    }

    @Test func operatorAPIResponsesMatchTheDocument() async throws {
        try await Self.withDocument { api in
            let admin = api.auth.operatorHeaders
            let created = try await api.call(.POST, "/admin/apps", 201, headers: admin, json: ["name": "conformance"])
            let app = try api.uuid(created, .apps)
            #expect(created.headers.first(name: "Location") == "/admin/apps/\(app)")
            try await api.call(.POST, "/admin/apps", 401, json: ["name": "x"])
            try await api.call(.POST, "/admin/apps", 401, headers: [("Authorization", "Bearer wrong")], json: ["name": "x"])
            #expect(try await api.call(.POST, "/admin/apps", 422, headers: admin, json: ["name": "  "]).errorProperty == "name")
            #expect(try await api.call(.POST, "/admin/apps", 422, headers: admin, json: [:]).errorID == "missing_property")
            api.check(
                try await api.auth.client.request(.POST, "/admin/apps", headers: admin, body: ByteBuffer(string: "[1")),
                "POST", "/admin/apps", 400)
            try await api.call(.GET, "/admin/apps/\(app)", 200, headers: admin)
            try await api.call(.GET, "/admin/apps/\(UUID().lowercased)", 404, headers: admin)
            try await api.call(.GET, "/admin/apps/not-an-id", 404, headers: admin)
            let patched = try await api.call(
                .PATCH, "/admin/apps/\(app)", 200, headers: admin,
                json: ["session_ttl_in_seconds": 3600, "require_certified_connections": false])
            #expect(patched.json?["session_ttl_in_seconds"] == 3600)
            try await api.call(.PATCH, "/admin/apps/\(app)", 422, headers: admin, json: ["session_ttl_in_seconds": 5])

            let named = try await api.call(.POST, "/admin/apps/\(app)/providers", 201, headers: admin, json: ["name": "main"])
            #expect(named.json?["name"] == "main")
            let bare = try await api.call(.POST, "/admin/apps/\(app)/providers", 201, headers: admin)
            #expect(!bare.text.contains("\"name\""))
            try await api.call(.POST, "/admin/apps/\(UUID().lowercased)/providers", 404, headers: admin)
            let keys = "/admin/apps/\(app)/providers/\(try api.uuid(bare, .providers))/keys"
            let publicKey = try TestKeys.key(0).publicKey.pemRepresentation
            let key = try api.uuid(
                try await api.call(.POST, keys, 201, headers: admin, json: ["public_key": .string(publicKey)]), .keys)
            try await api.call(.POST, keys, 422, headers: admin, json: ["public_key": "nope"])
            try await api.call(
                .POST, "/admin/apps/\(app)/providers/\(UUID().lowercased)/keys", 404, headers: admin,
                json: ["public_key": .string(publicKey)])
            let disabled = try await api.call(.PATCH, "\(keys)/\(key)", 200, headers: admin, json: ["enabled": false])
            #expect(disabled.json?["enabled"] == false)
            try await api.call(.PATCH, "\(keys)/\(key)", 422, headers: admin, json: [:])
            try await api.call(.DELETE, "\(keys)/\(key)", 204, headers: admin)
            try await api.call(.DELETE, "\(keys)/\(key)", 404, headers: admin)

            let minted = try await api.call(.POST, "/admin/apps/\(app)/tokens", 201, headers: admin)
            let tokenID = try api.uuid(minted, .tokens)
            try await api.call(.DELETE, "/admin/apps/\(app)/tokens/\(tokenID)", 204, headers: admin)
            try await api.call(.DELETE, "/admin/apps/\(app)/tokens/\(tokenID)", 404, headers: admin)

            _ = try await api.auth.session(user: "pat")
            let fixtureApp = api.auth.app.id.lowercased
            try await api.call(.POST, "/admin/apps/\(fixtureApp)/users/pat/challenge", 204, headers: admin)
            try await api.call(.POST, "/admin/apps/\(fixtureApp)/users/nobody/challenge", 404, headers: admin)
            try await api.call(.DELETE, "/admin/certificates/\(UUID().lowercased)", 404, headers: admin)
        }
    }

    @Test func serverAPIResponsesMatchTheDocument() async throws {
        try await Self.withDocument { api in
            let auth = api.auth
            let token = try await auth.serverAPIToken()
            let bearer = [("Authorization", "Bearer \(token)")]
            let app = "/apps/\(auth.app.id.lowercased)"
            let ttl: JSONValue = [["operation": "set", "property": "session_ttl_in_seconds", "value": 7200]]

            try await api.patch(app, 202, headers: bearer, json: ttl)
            try await api.call(
                .POST, app, 202, headers: bearer + [("X-HTTP-Method-Override", "PATCH")], json: ttl,
                contentType: MediaType.layerPatch,
                documentedAs: "PATCH")
            try await api.patch(app, 401, json: ttl)
            try await api.patch(app, 401, headers: [("Authorization", "Bearer \(token)x")], json: ttl)
            #expect(try await api.call(.PATCH, app, 406, headers: bearer, json: ttl).json?["data"]?["header"] == "Content-Type")
            try await api.patch(app, 406, headers: bearer, json: ttl, accept: nil)
            let unknown: JSONValue = [["operation": "set", "property": "colour", "value": "red"]]
            try await api.patch(app, 422, headers: bearer, json: unknown)
            try await api.patch(
                app, 422, headers: bearer, json: [["operation": "set", "property": "session_ttl_in_seconds", "value": 1]])
            #expect(try await api.patch(app, 422, headers: bearer, json: ["operation": "set"]).errorProperty == "body")
            try await api.patch("/apps/not-an-app", 404, headers: bearer, json: ttl)
        }
    }
}
