import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// The auth service: apps and providers, nonces, identity tokens, sessions, the device CA.
public struct AuthService: LayerService {
    public let name = "auth"
    public var migrations: MigrationRunner { authMigrations }
    public var openAPI: String { Self.openAPIDocument }
    /// Its `openapi.yaml` with the shared part, without a service to ask (`layer openapi`).
    public static let openAPIDocument = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "auth")
    public var links: [(rel: String, path: String)] { [("nonces", "/nonces"), ("sessions", "/sessions")] }

    let settings: AuthSettings
    let server: ServerSettings
    let sessions: Sessions
    let certificates: CertificateIssuer
    let certificateReader: ClientCertificateReader
    /// Guards the auth service's own session-authenticated routes, answering from its database
    /// rather than over HTTP.
    let sessionAuthenticator: SessionAuthenticator

    public init(settings: AuthSettings, server: ServerSettings, postgres: PostgresClient) {
        self.settings = settings
        self.server = server
        let apps = AppRepository(client: postgres)
        let certificateRepository = CertificateRepository(client: postgres)
        sessions = Sessions(
            apps: apps, nonces: NonceRepository(client: postgres),
            sessions: SessionRepository(client: postgres), certificates: certificateRepository,
            verifier: IdentityTokenVerifier(apps: apps))
        switch settings.caSource {
        case .database(let secret):
            certificates = CertificateIssuer(repository: certificateRepository, source: .database(secret: secret))
        case .files(let certificate, let key):
            certificates = CertificateIssuer(
                repository: certificateRepository, source: .files(certificate: certificate, key: key))
        }
        certificateReader = ClientCertificateReader(
            tlsEnabled: server.tlsCertificatePath != nil, trustedProxies: server.trustedProxies)
        sessionAuthenticator = SessionAuthenticator(
            introspector: LocalIntrospector(sessions: sessions), certificates: certificateReader, realm: server.realm,
            challenges: RateLimiter(settings.rateLimits.nonces))
    }

    public func addRoutes(to router: Router<LayerRequestContext>) {
        ClientController(
            sessions: sessions, certificates: certificates, certificateReader: certificateReader,
            authenticator: sessionAuthenticator, limits: settings.rateLimits, trustedProxies: server.trustedProxies
        ).addRoutes(to: router)
        AdminController(
            apps: sessions.apps, sessions: sessions.sessions, certificates: sessions.certificates,
            operatorToken: settings.operatorToken
        ).addRoutes(to: router)
        ServerAPIController(apps: sessions.apps, sessions: sessions.sessions).addRoutes(to: router)
        InternalController(sessions: sessions, internalToken: server.internalToken).addRoutes(to: router)
    }

    public var backgroundServices: [any Service] {
        [ExpiredRowsCleaner(sessions: sessions)]
    }

    public func prepare(logger: Logger) async throws {
        try await certificates.prepare(logger: logger)
    }

    /// For the TLS handshake of a server that accepts device certificates.
    public func isDeviceCertificate(_ chain: [[UInt8]]) async -> Bool {
        guard let leaf = chain.first else { return false }
        return certificates.isIssuedByUs(der: leaf)
    }
}

/// Deletes expired nonces and sessions once a minute.
struct ExpiredRowsCleaner: Service {
    let sessions: Sessions

    func run() async throws {
        let logger = Logger(label: "auth.cleaner")
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(60))
                do {
                    try await sessions.nonces.deleteExpired(logger: logger)
                    try await sessions.sessions.deleteExpired(logger: logger)
                } catch {
                    logger.warning("Cleaning expired rows failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
