import Foundation
import LayerModels
import LayerServer
import Logging
import _CryptoExtras

/// An identity token that passed every check but the nonce, which is spent together with the
/// session it opens.
struct VerifiedIdentity: Sendable {
    var app: AppRecord
    var identity: InternalAPI.Identity
    var nonce: String
}

/// Checks an identity token ("Layer External Identity Token") against the keys an app registered:
/// header, claims, key, provider, RS256 signature and lifetime, each failure with its own reason.
struct IdentityTokenVerifier: Sendable {
    let apps: AppRepository
    /// How far `iat` may lie in the future and `exp` in the past, for clocks that disagree.
    var clockSkew: TimeInterval = 30

    /// Verifies `token` for `app`; with `app` nil, the app is the one that registered its `kid`
    /// (the inline `Authorization: Layer identity-token` form names no app).
    func verify(_ token: String, app: UUID?, now: Date = Date(), logger: Logger) async throws -> VerifiedIdentity {
        let jws = try CompactJWS(token)
        try jws.requireHeader("typ", oneOf: ["JWT", "JWS"])
        try jws.requireHeader("alg", oneOf: ["RS256"])
        try jws.requireHeader("cty", oneOf: ["layer-eit;v=1"])
        let kid = try jws.headerString("kid")

        let issuer = try jws.claimString("iss")!
        let userID = try jws.claimString("prn")!
        let issuedAt = try jws.claimInteger("iat")
        let expiresAt = try jws.claimInteger("exp")
        let nonce = try jws.claimString("nce")!
        let identity = InternalAPI.Identity(
            userID: userID,
            displayName: try jws.claimString("display_name", required: false),
            avatarURL: try jws.claimString("avatar_url", required: false),
            firstName: try jws.claimString("first_name", required: false),
            lastName: try jws.claimString("last_name", required: false))
        guard userID.count <= 128 else {
            throw TokenFailure(.claimWrongType, "the claim 'prn' is longer than 128 characters.")
        }

        let key = try await registeredKey(kid: kid, app: app, logger: logger)
        try await checkIssuer(issuer, of: key, logger: logger)
        try verifySignature(jws, with: key)

        if Double(expiresAt) < now.timeIntervalSince1970 - clockSkew {
            throw TokenFailure(.expired, "the token expired at \(expiresAt) (exp).")
        }
        if Double(issuedAt) > now.timeIntervalSince1970 + clockSkew {
            throw TokenFailure(.notBefore, "the token is issued in the future (iat \(issuedAt)).")
        }
        return VerifiedIdentity(app: key.app, identity: identity, nonce: nonce)
    }

    private func registeredKey(kid: String, app: UUID?, logger: Logger) async throws -> KeyRecord {
        guard let keyID = LayerID(parsing: kid, as: .keys) else {
            throw TokenFailure(.keyNotFound, "the kid '\(kid)' is not a key id (layer:///keys/<uuid>).")
        }
        let key: KeyRecord?
        if let app {
            key = try await apps.key(keyID.uuid, app: app, logger: logger)
        } else {
            key = try await apps.key(keyID.uuid, logger: logger)
        }
        guard let key else {
            if let app, try await apps.app(app, logger: logger) == nil {
                throw APIError(.invalidAppID, "There is no app \(LayerID(.apps, app).uri).", property: "app_id")
            }
            throw TokenFailure(.keyNotFound, "no key \(keyID.uri) is registered for this app.")
        }
        if key.deleted { throw TokenFailure(.keyDeleted, "the key \(keyID.uri) was deleted.") }
        if !key.enabled { throw TokenFailure(.keyDisabled, "the key \(keyID.uri) is disabled.") }
        return key
    }

    private func checkIssuer(_ issuer: String, of key: KeyRecord, logger: Logger) async throws {
        let provider = LayerID(parsing: issuer, as: .providers)
        // A key is registered under one provider of its app: the common case needs no query.
        if provider?.uuid == key.providerID { return }
        guard let provider, try await apps.providerApp(provider.uuid, logger: logger) != nil else {
            throw TokenFailure(.providerNotFound, "the issuer '\(issuer)' is not a known provider.")
        }
        throw TokenFailure(
            .providerNotBoundToApp, "the provider \(provider.uri) is not bound to this app or did not register this key.")
    }

    private func verifySignature(_ jws: CompactJWS, with key: KeyRecord) throws {
        guard let publicKey = try? _RSA.Signing.PublicKey(pemRepresentation: key.publicKeyPEM) else {
            throw TokenFailure(.keyMalformed, "the registered key cannot be read as an RSA public key.")
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jws.signature)
        guard publicKey.isValidSignature(signature, for: jws.signingInput, padding: .insecurePKCS1v1_5) else {
            throw TokenFailure(.signatureVerificationFailed, "the RS256 signature does not match the key.")
        }
    }
}
