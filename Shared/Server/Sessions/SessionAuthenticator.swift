import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import Logging

/// Guards the routes of the Client API: a request must carry a live session
/// (`Authorization: Layer session-token="…"`, or `?session_token=` where allowed) or an identity
/// token to open one inline (`Authorization: Layer identity-token="…"`). Anything else is
/// answered with 401 `authentication_required`, a fresh nonce in `data.nonce` and the
/// `WWW-Authenticate: Layer realm=…, nonce=…` challenge.
public struct SessionAuthenticator: RouterMiddleware {
    public typealias Context = LayerRequestContext

    let introspector: any SessionIntrospector
    let certificates: ClientCertificateReader
    let realm: String
    let allowsQueryToken: Bool
    /// The process's limiters: every challenge stores a nonce, so challenges draw on the bucket of
    /// `POST /nonces`; an inline identity token costs what `POST /sessions` costs (a key lookup and
    /// an RSA verification), so it draws on that one.
    let limiters: RateLimiters

    public init(
        introspector: any SessionIntrospector, certificates: ClientCertificateReader, realm: String,
        allowsQueryToken: Bool = false, limiters: RateLimiters
    ) {
        self.introspector = introspector
        self.certificates = certificates
        self.realm = realm
        self.allowsQueryToken = allowsQueryToken
        self.limiters = limiters
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let credential = LayerAuthorization(request: request, allowsQueryToken: allowsQueryToken)
        let thumbprint = await certificates.thumbprint(request: request, context: context)
        switch credential {
        case .sessionToken(let token):
            let answer = try await introspector.introspect(token: token, logger: context.logger)
            context.session = try await session(from: answer, presented: thumbprint, request: request, context: context)
            return try await next(request, context)
        case .identityToken(let token):
            if let wait = limiters.sessions.wait(context.clientIP(request, trustedProxies: certificates.trustedProxies)) {
                throw APIError.rateLimited("Too many sessions opened from this address; try again shortly.", retryAfter: wait)
            }
            let created = try await introspector.createSession(
                identityToken: token, certificateThumbprint: thumbprint, logger: context.logger)
            context.session = try await session(
                from: created.session, presented: thumbprint, request: request, context: context)
            var response = try await next(request, context)
            response.headers[.layerUserID] = created.session.userID
            response.headers[.layerSessionToken] = created.sessionToken
            response.headers[.layerSessionTTL] = String(created.ttlSeconds)
            return response
        case .none:
            throw try await challenge("This request needs a session.", request: request, context: context)
        case .malformed:
            throw try await challenge(
                "The Authorization header must be of the form: Layer session-token=\"…\".", request: request,
                context: context)
        }
    }

    private func session(
        from answer: InternalAPI.IntrospectResponse, presented thumbprint: String?, request: Request, context: Context
    ) async throws -> AuthenticatedSession {
        guard answer.active, let userID = answer.userID, let appText = answer.appID,
            let app = LayerID(parsing: appText, as: .apps)
        else {
            if answer.reason == "suspended" {
                throw APIError(.userSuspended, "This user is suspended.")
            }
            throw try await challenge(Self.message(for: answer.reason), request: request, context: context)
        }
        if let bound = answer.cnf?.x5tS256, bound != thumbprint {
            // RFC 8705: a certificate-bound token is only good over a connection with that certificate.
            throw try await challenge(
                "This session is bound to a client certificate that this connection did not present.", request: request,
                context: context)
        }
        context.crossOrigin.madeFor(app: app.uuid)
        return AuthenticatedSession(
            userID: userID, appID: app.uuid, identity: answer.identity, expiresAt: answer.expiresAt,
            certificateThumbprint: answer.cnf?.x5tS256)
    }

    static func message(for reason: String?) -> String {
        switch reason {
        case "expired": "The session has expired; authenticate again."
        case "challenged": "The session was challenged; authenticate again with the new nonce."
        case "revoked": "The session was ended; authenticate again."
        case "certificate_revoked": "The client certificate of this session was revoked or has expired."
        default: "The session token is not valid; authenticate with the new nonce."
        }
    }

    private func challenge(_ message: String, request: Request, context: Context) async throws -> APIError {
        if let wait = limiters.nonces.wait(context.clientIP(request, trustedProxies: certificates.trustedProxies)) {
            return APIError.rateLimited("Too many unauthenticated requests; slow down.", retryAfter: wait)
        }
        let nonce = try await introspector.challengeNonce(logger: context.logger)
        return APIError.authenticationRequired(message, nonce: nonce, realm: realm)
    }
}

extension APIError {
    /// The 401 of the authentication protocol: a fresh nonce in the body and in `WWW-Authenticate`.
    public static func authenticationRequired(_ message: String, nonce: String, realm: String) -> APIError {
        APIError(
            .authenticationRequired, message, data: ["nonce": .string(nonce)],
            headers: [.wwwAuthenticate: "Layer realm=\"\(realm)\", nonce=\"\(nonce)\""])
    }
}

/// The credential a request carries.
public enum LayerAuthorization: Equatable, Sendable {
    case sessionToken(String)
    case identityToken(String)
    case none
    case malformed

    public init(request: Request, allowsQueryToken: Bool) {
        if let header = request.headers[.authorization] {
            self = Self.parse(header)
        } else if allowsQueryToken, let token = request.uri.queryParameters["session_token"], !token.isEmpty {
            self = .sessionToken(String(token))
        } else {
            self = .none
        }
    }

    /// Parses `Layer session-token="…"` (single quotes too, as the 1.0 docs allowed), or
    /// `Layer identity-token="…"`, optionally with a `realm=…` parameter as in the patent's example.
    public static func parse(_ header: String) -> Self {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("layer ") else { return .malformed }
        var parameters: [String: String] = [:]
        var rest = Substring(trimmed.dropFirst("layer ".count))
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            let value: Substring
            if let quote = rest.first, quote == "\"" || quote == "'" {
                let body = rest.dropFirst()
                guard let end = body.firstIndex(of: quote) else { return .malformed }
                value = body[..<end]
                rest = body[body.index(after: end)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end]
                rest = rest[end...]
            }
            parameters[name] = value.trimmingCharacters(in: .whitespaces)
        }
        if let token = parameters["session-token"], !token.isEmpty { return .sessionToken(token) }
        if let token = parameters["identity-token"], !token.isEmpty { return .identityToken(token) }
        return .malformed
    }
}

extension ClientCertificateReader {
    /// Reads device certificates as the server's settings say they arrive: over its own TLS, or
    /// from the trusted edge proxies.
    public init(_ server: ServerSettings) {
        self.init(
            tlsEnabled: server.tlsCertificatePath != nil, trustedProxies: server.trustedProxies,
            header: server.clientCertificateHeader)
    }
}

extension SessionAuthenticator {
    /// The session check of a service other than auth: sessions introspected with the auth service
    /// over internal HTTP, active answers trusted for the introspection cache time (or, not
    /// `cached`, asked anew at every request, for what a session that ended must not get at all).
    public static func remote(
        auth: InternalClient, server: ServerSettings, limiters: RateLimiters, cached: Bool = true
    ) -> SessionAuthenticator {
        let introspector = HTTPSessionIntrospector(client: auth)
        return SessionAuthenticator(
            introspector: cached ? CachingIntrospector(introspector, ttl: server.introspectionCacheTTL) : introspector,
            certificates: ClientCertificateReader(server), realm: server.realm, limiters: limiters)
    }

    /// The same check for the push routes (`/websocket`, `/events`), which also take the session
    /// token as `?session_token=`: browsers cannot set headers on a WebSocket or an EventSource.
    /// Every other route takes it only in `Authorization`, so tokens stay out of URLs and logs.
    public func acceptingQueryToken() -> SessionAuthenticator {
        SessionAuthenticator(
            introspector: introspector, certificates: certificates, realm: realm, allowsQueryToken: true,
            limiters: limiters)
    }

    /// The introspector it asks, for connections that check their session again later.
    public var sessionIntrospector: any SessionIntrospector { introspector }
}
