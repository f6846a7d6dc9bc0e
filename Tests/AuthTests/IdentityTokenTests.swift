import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import PostgresNIO
import Testing
import _CryptoExtras

/// Every way `POST /sessions` refuses an identity token (reference section 3): 422
/// `invalid_property` on `identity_token` with its own `eit_*` reason, and nothing stored.
@Suite struct IdentityTokenTests {
    // MARK: Header and structure

    @Test func wrongPartCount() async throws {
        try await AuthFixture.run { auth in
            for count in [2, 4] {
                let nonce = try await auth.nonce()
                let parts = try token(auth, nonce: nonce).split(separator: ".").map(String.init)
                let mangled = (parts + ["x"]).prefix(count).joined(separator: ".")
                try await expectRefused(auth, mangled, "eit_wrong_jws_part_count", nonce: nonce)
            }
        }
    }

    @Test(arguments: [0, 1, 2]) func malformedBase64URL(part: Int) async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            var parts = try token(auth, nonce: nonce).split(separator: ".").map(String.init)
            parts[part] = "*!bad#"
            try await expectRefused(auth, parts.joined(separator: "."), "eit_malformed_base64url", nonce: nonce)
        }
    }

    @Test(arguments: [(0, "not json"), (1, "{\"iss\":"), (0, "[\"typ\",\"JWT\"]"), (1, "\"a string\""), (1, "42")])
    func malformedJSON(part: Int, text: String) async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            var parts = try token(auth, nonce: nonce).split(separator: ".").map(String.init)
            parts[part] = Data(text.utf8).base64URLEncodedString()
            try await expectRefused(auth, parts.joined(separator: "."), "eit_malformed_json", nonce: nonce)
        }
    }

    @Test func unsignedAlgNone() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let unsigned = "\(try signingInput(auth, nonce: nonce, alg: "none"))."
            try await expectRefused(auth, unsigned, "eit_header_param_wrong_value", nonce: nonce)
        }
    }

    /// The classic algorithm confusion: an HMAC keyed with the public key the server knows.
    @Test func hs256KeyedWithThePublicKey() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let input = try signingInput(auth, nonce: nonce, alg: "HS256")
            let secret = SymmetricKey(data: Data(auth.app.signer.privateKey.publicKey.pemRepresentation.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: secret)
            try await expectRefused(
                auth, "\(input).\(Data(mac).base64URLEncodedString())", "eit_header_param_wrong_value", nonce: nonce)
        }
    }

    @Test func typAndCty() async throws {
        try await AuthFixture.run { auth in
            let cases: [([String: JSONValue], [String], String)] = [
                (["typ": "JOSE"], [], "eit_header_param_wrong_value"),
                ([:], ["typ"], "eit_header_param_not_found"),
                (["typ": 1], [], "eit_header_param_wrong_type"),
                (["cty": "layer-eit;v=2"], [], "eit_header_param_wrong_value"),
                ([:], ["cty"], "eit_header_param_not_found"),
            ]
            for (header, drop, reason) in cases {
                let nonce = try await auth.nonce()
                try await expectRefused(
                    auth, try token(auth, nonce: nonce, header: header, dropHeader: drop), reason, nonce: nonce)
            }
            // The older samples' "JWS" is accepted.
            let jws = try token(auth, nonce: try await auth.nonce(), header: ["typ": "JWS"])
            #expect(try await post(auth, jws).status == 201)
        }
    }

    @Test func kidMissingMalformedOrOfAnotherApp() async throws {
        try await AuthFixture.run { auth in
            let other = try await auth.registerApp(keyIndex: 1)
            var nonce = try await auth.nonce()
            try await expectRefused(
                auth, try token(auth, nonce: nonce, dropHeader: ["kid"]), "eit_header_param_not_found", nonce: nonce)
            nonce = try await auth.nonce()
            try await expectRefused(
                auth, try token(auth, nonce: nonce, header: ["kid": "key-1"]), "eit_key_not_found", nonce: nonce)
            nonce = try await auth.nonce()
            let foreign = try token(
                auth, nonce: nonce, header: ["kid": .string(other.keyID)], claims: ["iss": .string(other.providerID)],
                key: other.signer.privateKey)
            try await expectRefused(auth, foreign, "eit_key_not_found", nonce: nonce)
        }
    }

    @Test func disabledAndDeletedKeys() async throws {
        try await AuthFixture.run { auth in
            for (disable, reason) in [(true, "eit_key_disabled"), (false, "eit_key_deleted")] {
                let (keyID, key) = try await registerSecondKey(auth)
                let path =
                    "/admin/apps/\(auth.app.id.lowercased)/providers/\(bareUUID(auth.app.providerID))/keys/\(bareUUID(keyID))"
                let change =
                    disable
                    ? try await auth.client.request(.PATCH, path, headers: auth.operatorHeaders, json: ["enabled": false])
                    : try await auth.client.request(.DELETE, path, headers: auth.operatorHeaders)
                #expect(change.status == (disable ? 200 : 204))
                let nonce = try await auth.nonce()
                try await expectRefused(
                    auth, try token(auth, nonce: nonce, header: ["kid": .string(keyID)], key: key), reason, nonce: nonce)
            }
        }
    }

    // MARK: Claims

    @Test func issuerUnknownOrOfAnotherApp() async throws {
        try await AuthFixture.run { auth in
            let other = try await auth.registerApp(keyIndex: 1)
            var nonce = try await auth.nonce()
            let unknown = LayerID(.providers, UUID()).uri
            try await expectRefused(
                auth, try token(auth, nonce: nonce, claims: ["iss": .string(unknown)]), "eit_provider_not_found", nonce: nonce)
            nonce = try await auth.nonce()
            try await expectRefused(
                auth, try token(auth, nonce: nonce, claims: ["iss": .string(other.providerID)]), "eit_provider_not_bound_to_app",
                nonce: nonce)
        }
    }

    @Test(arguments: ["iss", "prn", "iat", "exp", "nce"]) func missingClaim(name: String) async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            try await expectRefused(auth, try token(auth, nonce: nonce, drop: [name]), "eit_claim_not_found", nonce: nonce)
        }
    }

    @Test func mistypedClaims() async throws {
        try await AuthFixture.run { auth in
            let now = Date().timeIntervalSince1970.rounded(.down)
            let cases: [[String: JSONValue]] = [
                ["iat": .string(String(Int(now)))], ["exp": .number(now + 300.5)], ["prn": 42], ["prn": ""],
                ["prn": .string(String(repeating: "p", count: 129))], ["nce": 7], ["display_name": 3],
            ]
            for claims in cases {
                let nonce = try await auth.nonce()
                try await expectRefused(auth, try token(auth, nonce: nonce, claims: claims), "eit_claim_wrong_type", nonce: nonce)
            }
        }
    }

    @Test func lifetime() async throws {
        try await AuthFixture.run { auth in
            let now = Date().timeIntervalSince1970.rounded(.down)
            var nonce = try await auth.nonce()
            let expired: [String: JSONValue] = ["iat": .number(now - 7200), "exp": .number(now - 3600)]
            try await expectRefused(auth, try token(auth, nonce: nonce, claims: expired), "eit_expired", nonce: nonce)
            nonce = try await auth.nonce()
            let early: [String: JSONValue] = ["iat": .number(now + 3600), "exp": .number(now + 7200)]
            try await expectRefused(auth, try token(auth, nonce: nonce, claims: early), "eit_not_before", nonce: nonce)
            // A few seconds of disagreeing clocks are tolerated.
            let skewed = try token(auth, nonce: try await auth.nonce(), claims: ["iat": .number(now + 10)])
            #expect(try await post(auth, skewed).status == 201)
        }
    }

    @Test func signatureOfAnotherKey() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let forged = try token(auth, nonce: nonce, key: try TestKeys.key(2))
            try await expectRefused(auth, forged, "eit_signature_verification_failed", nonce: nonce)
        }
    }

    @Test
    func nulCharacterInClaims() async throws {
        try await AuthFixture.run { auth in
            for claims: [String: JSONValue] in [["prn": "a\u{0}b"], ["display_name": "a\u{0}b"], ["avatar_url": "\u{0}"]] {
                let nonce = try await auth.nonce()
                try await expectRefused(auth, try token(auth, nonce: nonce, claims: claims), "eit_claim_wrong_type", nonce: nonce)
            }
            let response = try await post(auth, try token(auth, nonce: "a\u{0}b"))
            #expect(response.status == 422)
            #expect(response.errorProperty == "identity_token")
        }
    }

    // MARK: Nonces and users

    @Test func unknownExpiredAndSpentNonces() async throws {
        try await AuthFixture.run { auth in
            try await expectRefused(auth, try token(auth, nonce: Secrets.randomToken()), "eit_nonce_not_found", nonce: nil)

            let stale = try await auth.nonce()
            try await auth.server.postgres.query(
                "UPDATE auth.nonces SET expires_at = now() - interval '1 second' WHERE nonce = \(stale)", logger: .test)
            try await expectRefused(auth, try token(auth, nonce: stale), "eit_nonce_not_found", nonce: nil)

            let spent = try await auth.nonce()
            #expect(try await post(auth, try token(auth, nonce: spent, user: "first")).status == 201)
            try await expectRefused(auth, try token(auth, nonce: spent), "eit_nonce_not_found", nonce: nil)
        }
    }

    @Test func suspendedUserGetsNoSession() async throws {
        // The Server API's user routes are the sync service's, which asks this service to suspend.
        try await AuthFixture.run(withSync: SyncSettings()) { auth in
            _ = try await auth.session(user: "tess")
            let suspend = try await auth.client.request(
                .PATCH, "/apps/\(auth.app.id.lowercased)/users/tess",
                headers: [("Authorization", "Bearer \(try await auth.serverAPIToken())")],
                json: [["operation": "set", "property": "suspended", "value": true]], contentType: MediaType.layerPatch)
            #expect(suspend.status == 202)
            let nonce = try await auth.nonce()
            let refused = try await post(auth, try token(auth, nonce: nonce))
            #expect(refused.status == 403)
            #expect(refused.errorID == "user_suspended")
            #expect(refused.json?["code"] == 6)
            try await expectNonceUsable(auth, nonce)
        }
    }

    // MARK: app_id

    @Test func appIDMissingMalformedOrUnknown() async throws {
        try await AuthFixture.run { auth in
            let nonce = try await auth.nonce()
            let valid = try token(auth, nonce: nonce)
            let missing = try await auth.client.request(.POST, "/sessions", json: ["identity_token": .string(valid)])
            #expect(missing.status == 422)
            #expect(missing.errorID == "missing_property")
            #expect(missing.errorProperty == "app_id")
            for appID in ["garbage", "layer:///apps/not-a-uuid", LayerID(.apps, UUID()).uri, UUID().uuidString] {
                let refused = try await post(auth, valid, appID: appID)
                #expect(refused.status == 403, "\(appID)")
                #expect(refused.errorID == "invalid_app_id")
                #expect(refused.json?["code"] == 2)
            }
            try await expectNonceUsable(auth, nonce)
        }
    }

    @Test func appIDForms() async throws {
        try await AuthFixture.run { auth in
            let uuid = auth.app.id.lowercased
            for (index, appID) in ["layer:///apps/\(uuid)", "layer:///apps/production/\(uuid)", uuid, auth.app.id.uuidString]
                .enumerated()
            {
                let response = try await post(
                    auth, try token(auth, nonce: try await auth.nonce(), user: "form\(index)"), appID: appID)
                #expect(response.status == 201, "\(appID): \(response.text)")
                #expect(response.headers.first(name: "X-Layer-User-ID") == "form\(index)")
            }
        }
    }

    @Test func tokenOfOneAppPostedForAnother() async throws {
        try await AuthFixture.run { auth in
            let other = try await auth.registerApp(keyIndex: 1)
            let nonce = try await auth.nonce()
            try await expectRefused(auth, try token(auth, nonce: nonce), "eit_key_not_found", nonce: nonce, appID: other.uri)
        }
    }

    // MARK: Helpers

    /// Standard claims for `user`, valid for five minutes, with `nonce`.
    private func claims(_ auth: AuthFixture, nonce: String, user: String = "tess") -> [String: JSONValue] {
        let now = Date().timeIntervalSince1970.rounded(.down)
        return [
            "iss": .string(auth.app.providerID), "prn": .string(user), "nce": .string(nonce),
            "iat": .number(now), "exp": .number(now + 300),
        ]
    }

    /// A token of the fixture's app with fields of the header or claims replaced or dropped.
    private func token(
        _ auth: AuthFixture, nonce: String, user: String = "tess", header: [String: JSONValue] = [:],
        dropHeader: [String] = [], claims changes: [String: JSONValue] = [:], drop: [String] = [],
        key: _RSA.Signing.PrivateKey? = nil
    ) throws -> String {
        var fullHeader = auth.app.signer.standardHeader.merging(header) { _, new in new }
        var fullClaims = claims(auth, nonce: nonce, user: user).merging(changes) { _, new in new }
        for name in dropHeader { fullHeader[name] = nil }
        for name in drop { fullClaims[name] = nil }
        return try IdentityTokenSigner.sign(header: fullHeader, claims: fullClaims, with: key ?? auth.app.signer.privateKey)
    }

    /// What a signature covers (header and claims) with the header's `alg` replaced, for tokens
    /// whose signature part the test makes up itself.
    private func signingInput(_ auth: AuthFixture, nonce: String, alg: JSONValue) throws -> String {
        var header = auth.app.signer.standardHeader
        header["alg"] = alg
        return "\(try IdentityTokenSigner.encode(header)).\(try IdentityTokenSigner.encode(claims(auth, nonce: nonce)))"
    }

    private func post(_ auth: AuthFixture, _ token: String, appID: String? = nil) async throws -> TestResponse {
        try await auth.client.request(
            .POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(appID ?? auth.app.uri)])
    }

    /// Asserts the 422 of a refused token, that user "tess" was not stored and, given the
    /// token's nonce, that the nonce was not spent.
    private func expectRefused(
        _ auth: AuthFixture, _ token: String, _ reason: String, nonce: String?, appID: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let response = try await post(auth, token, appID: appID)
        #expect(response.status == 422, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorID == "invalid_property", sourceLocation: sourceLocation)
        #expect(response.json?["code"] == 105, sourceLocation: sourceLocation)
        #expect(response.errorProperty == "identity_token", sourceLocation: sourceLocation)
        #expect(response.errorReason == reason, sourceLocation: sourceLocation)
        #expect(try await storedUsers(auth, "tess") == 0, "a refused token created its user", sourceLocation: sourceLocation)
        if let nonce { try await expectNonceUsable(auth, nonce, sourceLocation: sourceLocation) }
    }

    /// The nonce was not spent: a valid token with it opens a session.
    private func expectNonceUsable(
        _ auth: AuthFixture, _ nonce: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let response = try await post(auth, try auth.app.signer.token(userID: "after", nonce: nonce))
        #expect(response.status == 201, "nonce was spent: \(response.text)", sourceLocation: sourceLocation)
    }

    private func storedUsers(_ auth: AuthFixture, _ user: String) async throws -> Int {
        let rows = try await auth.server.postgres.query(
            "SELECT count(*) FROM auth.users WHERE app_id = \(auth.app.id) AND user_id = \(user)", logger: .test)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Registers `TestKeys.key(1)` as a second key of the fixture's provider.
    private func registerSecondKey(_ auth: AuthFixture) async throws -> (String, _RSA.Signing.PrivateKey) {
        let key = try TestKeys.key(1)
        let response = try await auth.client.request(
            .POST, "/admin/apps/\(auth.app.id.lowercased)/providers/\(bareUUID(auth.app.providerID))/keys",
            headers: auth.operatorHeaders, json: ["public_key": .string(key.publicKey.pemRepresentation)])
        return (try #require(response.json?["id"]?.stringValue), key)
    }

}
