import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// The Client API of the auth service: nonces, sessions and device certificates.
struct ClientController: Sendable {
    let sessions: Sessions
    let certificates: CertificateIssuer
    let certificateReader: ClientCertificateReader
    let authenticator: SessionAuthenticator
    let limiters: RateLimiters
    let endings: SessionEndings
    let trustedProxies: TrustedProxies

    struct NonceResponse: Codable { var nonce: String }

    struct CreateSession: Decodable {
        var identityToken: String
        var appID: String
        enum CodingKeys: String, CodingKey {
            case identityToken = "identity_token"
            case appID = "app_id"
        }
    }

    struct SessionResponse: Codable {
        var sessionToken: String
        enum CodingKeys: String, CodingKey { case sessionToken = "session_token" }
    }

    struct CurrentSession: Codable {
        var userID: String
        var appID: String
        var identity: InternalAPI.Identity?
        var expiresAt: Date?
        var certificateBound: Bool
        enum CodingKeys: String, CodingKey {
            case identity
            case userID = "user_id"
            case appID = "app_id"
            case expiresAt = "expires_at"
            case certificateBound = "certificate_bound"
        }
    }

    struct CreateCertificate: Decodable { var csr: String }

    func addRoutes(to router: LimitedRoutes) {
        let api = router.group().add(middleware: AcceptHeaderMiddleware())
        api.group("nonces")
            .add(middleware: RateLimitMiddleware(limiters.nonces, trustedProxies: trustedProxies))
            .post(use: createNonce)
        api.group("sessions")
            .add(middleware: RateLimitMiddleware(limiters.sessions, trustedProxies: trustedProxies))
            .post(use: createSession)
        api.delete("sessions/:token", use: deleteSession)
        api.group("sessions/current").add(middleware: authenticator).get(use: currentSession)
        api.group("certificates")
            .add(middleware: RateLimitMiddleware(limiters.certificates, trustedProxies: trustedProxies))
            .post(use: createCertificate)
    }

    @Sendable func createNonce(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let nonce = try await sessions.nonces.create(logger: context.logger)
        return try Response.json(NonceResponse(nonce: nonce), status: .created)
    }

    @Sendable func createSession(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(CreateSession.self, limit: 16 * 1024)
        guard let app = LayerID(parsing: body.appID, as: .apps) else {
            throw APIError(.invalidAppID, "'\(body.appID)' is not an app id.", property: "app_id")
        }
        // A client holding a challenged session renews it by sending it along.
        var renewing: String?
        if case .sessionToken(let token) = LayerAuthorization(request: request, allowsQueryToken: false) {
            renewing = token
        }
        let opened = try await sessions.open(
            identityToken: body.identityToken, app: app.uuid,
            certificateThumbprint: await certificateReader.thumbprint(request: request, context: context),
            renewing: renewing, logger: context.logger)
        var response = try Response.json(SessionResponse(sessionToken: opened.token), status: .created)
        response.headers[.layerUserID] = opened.identity.userID
        response.headers[.layerSessionToken] = opened.token
        response.headers[.layerSessionTTL] = String(opened.ttlSeconds)
        let base = request.baseURL
        response.headers[.link] = [("conversations", "/conversations"), ("content", "/content"), ("websocket", "/websocket")]
            .map { "<\(base)\($0.1)>; rel=\($0.0)" }.joined(separator: ", ")
        return response
    }

    @Sendable func deleteSession(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let token = context.parameters.decoded("token")
        guard try await endings.logout(token: token, logger: context.logger) else {
            throw APIError.notFound("The session")
        }
        return Response(status: .noContent)
    }

    @Sendable func currentSession(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        return try Response.json(
            CurrentSession(
                userID: session.userID, appID: LayerID(.apps, session.appID).uri, identity: session.identity,
                expiresAt: session.expiresAt, certificateBound: session.certificateThumbprint != nil))
    }

    @Sendable func createCertificate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let body = try await request.decodeJSON(CreateCertificate.self, limit: 32 * 1024)
        let issued = try await certificates.certify(CertificateRequest(body.csr), logger: context.logger)
        return try Response.json(issued.response, status: .created)
    }
}
