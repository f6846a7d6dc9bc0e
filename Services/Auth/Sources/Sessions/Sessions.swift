import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Opens, renews and describes sessions: the heart of the authentication protocol.
struct Sessions: Sendable {
    let apps: AppRepository
    let nonces: NonceRepository
    let sessions: SessionRepository
    let certificates: CertificateRepository
    let verifier: IdentityTokenVerifier
    /// Tells the sync service, which owns identities, of each sign-in's claims.
    let reporter: ClaimsReporter

    struct Opened: Sendable {
        var token: String
        var ttlSeconds: Int
        var appID: UUID
        var identity: InternalAPI.Identity
        var certificateThumbprint: String?
        var expiresAt: Date
    }

    /// Trades an identity token for a session. `app` is the app the client named (nil for the
    /// inline form, where the token's key decides); `renewing` is a challenged session the client
    /// still holds, which is renewed instead of replaced when the token is for the same user.
    func open(
        identityToken: String, app appID: UUID?, certificateThumbprint: String?, renewing: String?, logger: Logger
    ) async throws -> Opened {
        let verified: VerifiedIdentity
        do {
            verified = try await verifier.verify(identityToken, app: appID, logger: logger)
        } catch let failure as TokenFailure {
            throw failure.apiError(property: "identity_token")
        }
        let app = verified.app

        let boundThumbprint = try await usableCertificate(certificateThumbprint, logger: logger)
        if app.requireCertified && boundThumbprint == nil {
            throw APIError(
                .accessDenied, "This app requires a connection certified with a device certificate (POST /certificates).",
                data: ["reason": "certificate_required"])
        }

        let identity = verified.identity
        var token = Secrets.randomToken()
        var thumbprint = boundThumbprint
        let user: UserRecord
        let unreported: UnreportedClaims
        let hold = reporter.hold
        switch try await sessions.openSession(
            app: app.id, identity: identity, nonce: verified.nonce, token: token, renewing: renewing,
            ttlSeconds: app.sessionTTLSeconds, certificateThumbprint: boundThumbprint, reportHold: hold,
            logger: logger)
        {
        case .opened(let stored, let claims):
            user = stored
            unreported = claims
        case .renewed(let stored, let claims, let renewedThumbprint):
            // The challenged session works again under its own token, bound to the certificate
            // presented now if there is one (which an app that requires certified connections
            // insists on, above); a token for another user never gets here, and opens a session
            // of its own instead.
            token = renewing!
            user = stored
            unreported = claims
            thumbprint = renewedThumbprint
        case .suspended:
            throw TokenFailure(.userSuspended, "The user \(identity.userID) is suspended.").apiError(property: "identity_token")
        case .nonceNotFound:
            throw TokenFailure(.nonceNotFound, "the nonce is unknown, expired or already used.")
                .apiError(property: "identity_token")
        }
        // Before the client has its session, the sync service knows the user (unless it is
        // down: then the report is made later, and the session opens all the same).
        await reporter.report(unreported, held: hold, logger: logger)
        return Opened(
            token: token, ttlSeconds: app.sessionTTLSeconds, appID: app.id, identity: user.identity,
            certificateThumbprint: thumbprint, expiresAt: Date().addingTimeInterval(TimeInterval(app.sessionTTLSeconds)))
    }

    /// The thumbprint to bind a new session to: a certificate this CA issued and has not revoked.
    /// A revoked or expired one is refused outright; one from elsewhere counts as none.
    private func usableCertificate(_ thumbprint: String?, logger: Logger) async throws -> String? {
        guard let thumbprint else { return nil }
        switch try await certificates.status(thumbprint: thumbprint, logger: logger) {
        case .valid: return thumbprint
        case .revoked:
            throw APIError(
                .accessDenied, "The client certificate was revoked; certify again.", data: ["reason": "certificate_revoked"])
        case .expired:
            throw APIError(
                .accessDenied, "The client certificate has expired; certify again.", data: ["reason": "certificate_expired"])
        case nil: return nil
        }
    }

    /// RFC 7662 introspection of a session token.
    func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        Self.introspection(of: try await sessions.session(token: token, logger: logger))
    }

    /// The introspection of each of `tokens`, in their order, from one lookup.
    func introspect(tokens: [String], logger: Logger) async throws -> [InternalAPI.IntrospectResponse] {
        try await sessions.sessions(tokens: tokens, logger: logger).map(Self.introspection(of:))
    }

    private static func introspection(of session: SessionRecord?) -> InternalAPI.IntrospectResponse {
        guard let session else { return .inactive("unknown") }
        if session.suspended { return .inactive("suspended") }
        if session.certificateRevoked { return .inactive("certificate_revoked") }
        if session.challenged { return .inactive("challenged") }
        if session.expiresAt <= Date() { return .inactive("expired") }
        return InternalAPI.IntrospectResponse(
            active: true, userID: session.identity.userID, appID: LayerID(.apps, session.appID).uri,
            identity: session.identity, expiresAt: session.expiresAt,
            cnf: session.certificateThumbprint.map { .init(x5tS256: $0) })
    }
}

/// The auth service's own session middleware asks its database directly.
struct LocalIntrospector: SessionIntrospector {
    let sessions: Sessions

    func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        try await sessions.introspect(token: token, logger: logger)
    }

    func introspect(tokens: [String], logger: Logger) async throws -> [InternalAPI.IntrospectResponse] {
        try await sessions.introspect(tokens: tokens, logger: logger)
    }

    func createSession(
        identityToken: String, certificateThumbprint: String?, logger: Logger
    ) async throws -> InternalAPI.CreateSessionResponse {
        let opened = try await sessions.open(
            identityToken: identityToken, app: nil, certificateThumbprint: certificateThumbprint, renewing: nil,
            logger: logger)
        return opened.response
    }

    func challengeNonce(logger: Logger) async throws -> String {
        try await sessions.nonces.create(logger: logger)
    }
}

extension Sessions.Opened {
    var response: InternalAPI.CreateSessionResponse {
        .init(
            sessionToken: token, ttlSeconds: ttlSeconds,
            session: .init(
                active: true, userID: identity.userID, appID: LayerID(.apps, appID).uri, identity: identity,
                expiresAt: expiresAt, cnf: certificateThumbprint.map { .init(x5tS256: $0) }))
    }
}
