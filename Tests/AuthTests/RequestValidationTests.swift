import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

/// Bad input on the auth routes: each is a 4xx in the API's error shape that says what was
/// wrong, and none of them stores anything.
@Suite struct RequestValidationTests {
    // MARK: POST /sessions bodies

    @Test func malformedBodies() async throws {
        try await AuthFixture.run { auth in
            for body in ["{\"identity_token\": ", "not json at all", ""] {
                let response = try await auth.client.request(.POST, "/sessions", body: ByteBuffer(string: body))
                expectError(response, 400, "invalid_request", code: 10)
            }
            // JSON, but not an object: the body is the property at fault.
            for body in ["[]", "[1, 2]", "\"text\""] {
                let response = try await auth.client.request(.POST, "/sessions", body: ByteBuffer(string: body))
                expectError(response, 422, "invalid_property", code: 105, property: "body")
            }
            #expect(try await sessionCount(auth) == 0)
        }
    }

    @Test func identityTokenOfTheWrongType() async throws {
        try await AuthFixture.run { auth in
            for value: JSONValue in [42, ["a"], ["token": "x"], true, nil] {
                let response = try await auth.client.request(
                    .POST, "/sessions", json: ["identity_token": value, "app_id": .string(auth.app.uri)])
                expectError(response, 422, "invalid_property", code: 105, property: "identity_token")
            }
            #expect(try await sessionCount(auth) == 0)
        }
    }

    @Test func oversizedBody() async throws {
        try await AuthFixture.run { auth in
            let token = try await auth.identityToken(user: "big")
            let big = try await auth.client.request(
                .POST, "/sessions",
                json: [
                    "identity_token": .string(token), "app_id": .string(auth.app.uri),
                    "padding": .string(String(repeating: "x", count: 17 * 1024)),
                ])
            expectError(big, 413, "request_too_large", code: 112)
            #expect(try await sessionCount(auth) == 0)
            // The token's nonce was not spent by the refused request.
            #expect(try await auth.createSession(token: token).status == 201)
        }
    }

    // MARK: Headers

    @Test func acceptHeaderMustNameAVersionOfTheAPI() async throws {
        try await AuthFixture.run { auth in
            let token = try await auth.identityToken(user: "accept")
            let body: JSONValue = ["identity_token": .string(token), "app_id": .string(auth.app.uri)]
            let accepts: [String?] = [
                nil, "application/vnd.layer+json; version=1.1", "application/vnd.layer+json; version=9.9",
                "application/json", "application/vnd.layer+json", "application/vnd.layer+json; version=",
            ]
            for accept in accepts {
                let response = try await auth.client.request(.POST, "/sessions", json: body, accept: accept)
                expectError(response, 406, "invalid_header", code: 107)
                #expect(response.json?["data"]?["header"] == "Accept", "\(accept ?? "none")")
                let nonce = try await auth.client.request(.POST, "/nonces", accept: accept)
                #expect(nonce.status == 406)
            }
            #expect(try await sessionCount(auth) == 0)
            #expect(try await auth.createSession(token: token).status == 201)
            // Every version of the Client API signs in the same way.
            for version in ["1.0", "2.0"] {
                let accept = "application/vnd.layer+json; version=\(version)"
                let nonce = try await auth.client.request(.POST, "/nonces", accept: accept)
                #expect(nonce.status == 201, "\(version)")
                let token = try auth.app.signer.token(userID: "accept", nonce: nonce.json?["nonce"]?.stringValue ?? "")
                let body: JSONValue = ["identity_token": .string(token), "app_id": .string(auth.app.uri)]
                let session = try await auth.client.request(.POST, "/sessions", json: body, accept: accept)
                #expect(session.status == 201, "\(version)")
            }
        }
    }

    @Test func unknownEndpoint() async throws {
        try await AuthFixture.run { auth in
            for path in ["/nonce", "/sessions/current/extra", "/no/such/thing"] {
                let response = try await auth.client.request(.GET, path)
                expectError(response, 404, "invalid_endpoint", code: 106)
            }
        }
    }

    @Test func requestIDs() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.client.request(.POST, "/nonces")
            let error = try await auth.client.request(.GET, "/sessions/current")
            let missing = try await auth.client.request(.GET, "/nowhere")
            var seen: Set<String> = []
            for response in [nonce, error, missing] {
                let id = try #require(response.headers.first(name: "X-Request-Id"))
                #expect(!id.isEmpty && id.count <= 128)
                seen.insert(id)
            }
            #expect(seen.count == 3)

            let echoed = try await auth.client.request(.POST, "/nonces", headers: [("X-Request-Id", "client-42.a_b")])
            #expect(echoed.headers.first(name: "X-Request-Id") == "client-42.a_b")
            for insane in ["has spaces in it", String(repeating: "a", count: 129), "<script>"] {
                let replaced = try await auth.client.request(.POST, "/nonces", headers: [("X-Request-Id", insane)])
                let id = try #require(replaced.headers.first(name: "X-Request-Id"))
                #expect(id != insane)
                #expect(UUID(uuidString: id) != nil)
            }
        }
    }

    // MARK: Authentication challenges

    @Test func challengeNonceIsUsable() async throws {
        try await AuthFixture.run { auth in
            let response = try await auth.client.request(.GET, "/sessions/current")
            expectError(response, 401, "authentication_required", code: 4)
            let nonce = try #require(response.json?["data"]?["nonce"]?.stringValue)
            let header = try #require(response.headers.first(name: "WWW-Authenticate"))
            #expect(header.hasPrefix("Layer realm=\"") && !header.hasPrefix("Layer realm=\"\""))
            #expect(header.hasSuffix(", nonce=\"\(nonce)\""))

            let created = try await auth.createSession(token: try auth.app.signer.token(userID: "challenged", nonce: nonce))
            #expect(created.status == 201)
        }
    }

    @Test func malformedAuthorization() async throws {
        try await AuthFixture.run { auth in
            for header in [
                "Bearer x", "Layer foo", "Layer session-token=\"unterminated", "Layer session-token=\"\"", "Basic YTpi",
            ] {
                let response = try await auth.client.request(.GET, "/sessions/current", headers: [("Authorization", header)])
                expectError(response, 401, "authentication_required", code: 4)
                let nonce = response.json?["data"]?["nonce"]?.stringValue
                #expect(nonce?.isEmpty == false, "\(header)")
                #expect(response.headers.first(name: "WWW-Authenticate")?.contains("nonce=\"\(nonce ?? "-")\"") == true)
            }
            let unknown = try await auth.client.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader("nope"))
            expectError(unknown, 401, "authentication_required", code: 4)
        }
    }

    @Test func operatorRoutesNeedTheOperatorToken() async throws {
        try await AuthFixture.run { auth in
            let credentials: [[(String, String)]] = [
                [], [("Authorization", "Bearer wrong")], [("Authorization", "Bearer")],
                [("Authorization", "Layer session-token=\"\(auth.operatorToken)\"")],
                [("Authorization", "Bearer \(try await auth.serverAPIToken())")],
            ]
            for headers in credentials {
                let response = try await auth.client.request(.POST, "/admin/apps", headers: headers, json: ["name": "intruder"])
                expectError(response, 401, "authentication_required", code: 4)
                #expect(response.headers.first(name: "WWW-Authenticate")?.hasPrefix("Bearer") == true)
            }
            #expect(try await auth.count("SELECT count(*) FROM auth.apps WHERE name = 'intruder'") == 0)
        }
    }

    // MARK: Operator API

    @Test func adminValidation() async throws {
        try await AuthFixture.run { auth in
            let app = auth.app.id.lowercased
            for name: JSONValue in ["", "   ", .string(String(repeating: "n", count: 129))] {
                let response = try await auth.client.request(
                    .POST, "/admin/apps", headers: auth.operatorHeaders, json: ["name": name])
                expectError(response, 422, "invalid_property", code: 105, property: "name")
            }
            let noName = try await auth.client.request(.POST, "/admin/apps", headers: auth.operatorHeaders, json: [:])
            expectError(noName, 422, "missing_property", code: 104, property: "name")
            #expect(try await auth.count("SELECT count(*) FROM auth.apps WHERE btrim(name) = '' OR length(name) > 128") == 0)

            let keys = "/admin/apps/\(app)/providers/\(auth.app.providerID.split(separator: "/").last!)/keys"
            let ecKey = P256.Signing.PrivateKey().publicKey.pemRepresentation
            for pem: JSONValue in ["hello", .string(ecKey), 12] {
                let response = try await auth.client.request(
                    .POST, keys, headers: auth.operatorHeaders, json: ["public_key": pem])
                expectError(response, 422, "invalid_property", code: 105, property: "public_key")
            }
            #expect(try await auth.count("SELECT count(*) FROM auth.keys WHERE app_id = \(auth.app.id)") == 1)

            for ttl: JSONValue in [5, 29, 31_536_001, -1] {
                let response = try await auth.client.request(
                    .PATCH, "/admin/apps/\(app)", headers: auth.operatorHeaders, json: ["session_ttl_in_seconds": ttl])
                expectError(response, 422, "invalid_property", code: 105, property: "session_ttl_in_seconds")
            }
            let stored = try await auth.client.request(.GET, "/admin/apps/\(app)", headers: auth.operatorHeaders)
            #expect(stored.json?["session_ttl_in_seconds"] == 2_592_000)
        }
    }

    // MARK: Server API

    @Test func serverAPINeedsALiveTokenOfThisApp() async throws {
        try await AuthFixture.run { auth in
            let other = try await auth.registerApp(keyIndex: 1)
            let mint = try await auth.client.request(
                .POST, "/admin/apps/\(auth.app.id.lowercased)/tokens", headers: auth.operatorHeaders)
            let revoked = try #require(mint.json?["token"]?.stringValue)
            let tokenID = try #require(mint.json?["id"]?.stringValue)
            #expect(tokenID.hasPrefix("layer:///tokens/"))
            let revoke = try await auth.client.request(
                .DELETE, "/admin/apps/\(auth.app.id.lowercased)/tokens/\(tokenID.split(separator: "/").last!)",
                headers: auth.operatorHeaders)
            #expect(revoke.status == 204)
            let otherToken = try await auth.serverAPIToken(app: other)

            for token in [nil, revoked, otherToken, "garbage"] {
                let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
                let response = try await patchTTL(auth, 3600, headers: headers)
                expectError(response, 401, "authentication_required", code: 4)
            }
            let stored = try await auth.client.request(
                .GET, "/admin/apps/\(auth.app.id.lowercased)", headers: auth.operatorHeaders)
            #expect(stored.json?["session_ttl_in_seconds"] == 2_592_000)
        }
    }

    @Test func serverAPIPatchValidation() async throws {
        try await AuthFixture.run { auth in
            let bearer = [("Authorization", "Bearer \(try await auth.serverAPIToken())")]
            let wrongType = try await patchTTL(auth, 3600, headers: bearer, contentType: MediaType.json)
            expectError(wrongType, 406, "invalid_header", code: 107)
            #expect(wrongType.json?["data"]?["header"] == "Content-Type")

            let unknown = try await auth.client.request(
                .PATCH, "/apps/\(auth.app.id.lowercased)", headers: bearer,
                json: [["operation": "set", "property": "colour", "value": "red"]], contentType: MediaType.layerPatch)
            expectError(unknown, 422, "invalid_property", code: 105, property: "0.property")

            let outOfRange = try await patchTTL(auth, 5, headers: bearer)
            expectError(outOfRange, 422, "invalid_property", code: 105, property: "session_ttl_in_seconds")

            let notAnArray = try await auth.client.request(
                .PATCH, "/apps/\(auth.app.id.lowercased)", headers: bearer, json: ["session_ttl_in_seconds": 3600],
                contentType: MediaType.layerPatch)
            expectError(notAnArray, 422, "invalid_property", code: 105, property: "body")
            #expect(try await sessionTTL(auth) == 2_592_000)
        }
    }

    @Test func methodOverrideActsAsPatch() async throws {
        try await AuthFixture.run { auth in
            let bearer = [("Authorization", "Bearer \(try await auth.serverAPIToken())")]
            let response = try await auth.client.request(
                .POST, "/apps/\(auth.app.id.lowercased)", headers: bearer + [("X-HTTP-Method-Override", "PATCH")],
                json: [["operation": "set", "property": "session_ttl_in_seconds", "value": 7200]],
                contentType: MediaType.layerPatch)
            #expect(response.status == 202, "\(response.text)")
            #expect(try await sessionTTL(auth) == 7200)
            let created = try await auth.createSession(token: try await auth.identityToken(user: "override"))
            #expect(created.headers.first(name: "X-Layer-Session-TTL") == "7200")
        }
    }

    @Test
    func hugeSessionTTLIsRefused() async throws {
        try await AuthFixture.run { auth in
            let bearer = [("Authorization", "Bearer \(try await auth.serverAPIToken())")]
            for ttl: JSONValue in [.number(1e300), .number(-1e300)] {
                let response = try await auth.client.request(
                    .PATCH, "/apps/\(auth.app.id.lowercased)", headers: bearer,
                    json: [["operation": "set", "property": "session_ttl_in_seconds", "value": ttl]],
                    contentType: MediaType.layerPatch)
                expectError(response, 422, "invalid_property", code: 105, property: "session_ttl_in_seconds")
            }
        }
    }

    @Test
    func nulCharactersAreRefused() async throws {
        // With sync, whose Server API serves the user routes.
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            let app = auth.app.id.lowercased
            let named = try await auth.client.request(
                .POST, "/admin/apps", headers: auth.operatorHeaders, json: ["name": "a\u{0}b"])
            expectError(named, 422, "invalid_property", code: 105, property: "name")
            let provider = try await auth.client.request(
                .POST, "/admin/apps/\(app)/providers", headers: auth.operatorHeaders, json: ["name": "a\u{0}b"])
            expectError(provider, 422, "invalid_property", code: 105, property: "name")
            let bearer = [("Authorization", "Bearer \(try await auth.serverAPIToken())")]
            let user = try await auth.client.request(.GET, "/apps/\(app)/users/a%00b", headers: bearer)
            expectError(user, 404, "not_found", code: 102)
            let challenge = try await auth.client.request(
                .POST, "/admin/apps/\(app)/users/a%00b/challenge", headers: auth.operatorHeaders)
            expectError(challenge, 404, "not_found", code: 102)
        }
    }

    @Test
    func unsupportedMethodIs405() async throws {
        try await AuthFixture.run { auth in
            for (method, path, allow) in [(HTTPMethod.GET, "/nonces", "POST"), (.PUT, "/sessions", "POST")] {
                let response = try await auth.client.request(method, path)
                expectError(response, 405, "method_not_allowed", code: 109)
                #expect(response.headers.first(name: "Allow")?.contains(allow) == true)
            }
        }
    }

    // MARK: Helpers

    /// Asserts the status and the whole error shape: `id`, `code`, `message`, `url`, `data`.
    private func expectError(
        _ response: TestResponse, _ status: Int, _ id: String, code: Int, property: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorID == id, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json?["code"] == .number(Double(code)), sourceLocation: sourceLocation)
        #expect(response.json?["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(response.json?["url"]?.stringValue?.hasPrefix("https://") == true, sourceLocation: sourceLocation)
        #expect(
            response.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        if let property {
            #expect(response.errorProperty == property, "\(response.text)", sourceLocation: sourceLocation)
        }
    }

    private func patchTTL(
        _ auth: AuthFixture, _ ttl: Int, headers: [(String, String)], contentType: String = MediaType.layerPatch
    ) async throws -> TestResponse {
        try await auth.client.request(
            .PATCH, "/apps/\(auth.app.id.lowercased)", headers: headers,
            json: [["operation": "set", "property": "session_ttl_in_seconds", "value": .number(Double(ttl))]],
            contentType: contentType)
    }

    private func sessionTTL(_ auth: AuthFixture) async throws -> Int {
        try await auth.count("SELECT session_ttl_seconds::bigint FROM auth.apps WHERE id = \(auth.app.id)")
    }

    private func sessionCount(_ auth: AuthFixture) async throws -> Int {
        try await auth.count("SELECT count(*) FROM auth.sessions WHERE app_id = \(auth.app.id)")
    }
}
