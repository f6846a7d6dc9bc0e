import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// The auth service: apps and providers, nonces, identity tokens, sessions, the device CA.
public struct AuthService: ConfigurableService {
    public static let name = InternalAPI.Service.auth
    public static let defaultPort = 8081
    public static var migrations: MigrationRunner { authMigrations }
    public static var internalCallers: [String] { InternalController.callers }
    /// Its `openapi.yaml` with the shared part.
    public static let openAPI = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "auth")
    public var links: [(rel: String, path: String)] { [("nonces", "/nonces"), ("sessions", "/sessions")] }

    let settings: AuthSettings
    let server: ServerSettings
    let sessions: Sessions
    let certificates: CertificateIssuer
    let certificateReader: ClientCertificateReader
    /// Guards the auth service's own session-authenticated routes, answering from its database
    /// rather than over HTTP.
    let sessionAuthenticator: SessionAuthenticator
    let limiters: RateLimiters
    let endings: SessionEndings
    let reporter: ClaimsReporter
    let origins: AllowedOrigins
    /// The sync service: told of ended sessions, and the owner of push providers.
    let sync: InternalClient

    public init(settings: AuthSettings, dependencies: ServiceDependencies) {
        let server = dependencies.server
        let postgres = dependencies.postgres
        self.settings = settings
        self.server = server
        let apps = AppRepository(postgres: postgres)
        let certificateRepository = CertificateRepository(postgres: postgres)
        let sessionRepository = SessionRepository(postgres: postgres)
        // The sync service owns the users: it is told the claims of every sign-in.
        let token = server.internalTokens.token(of: Self.name)
        let syncURL = dependencies.peerURL(InternalAPI.Service.sync, configured: settings.syncURL)
        reporter = ClaimsReporter(
            claims: ClaimsRepository(postgres: postgres),
            sync: InternalClient(
                baseURL: syncURL, token: token, http: .failingFast, timeout: .seconds(2), attempts: 1),
            retry: settings.claimsReportInterval)
        sessions = Sessions(
            apps: apps, nonces: NonceRepository(postgres: postgres), sessions: sessionRepository,
            certificates: certificateRepository, verifier: IdentityTokenVerifier(apps: apps), reporter: reporter)
        switch settings.caSource {
        case .database(let secret):
            certificates = CertificateIssuer(repository: certificateRepository, source: .database(secret: secret))
        case .files(let certificate, let key):
            certificates = CertificateIssuer(
                repository: certificateRepository, source: .files(certificate: certificate, key: key))
        }
        // The sync service is told when sessions end: on this listener when it runs here too.
        let sync = InternalClient(
            baseURL: syncURL, token: token, http: dependencies.http, timeout: .seconds(2), attempts: 3)
        endings = SessionEndings(sessions: sessions.sessions, certificates: certificateRepository, peers: [sync])
        self.sync = sync
        certificateReader = ClientCertificateReader(server)
        sessionAuthenticator = SessionAuthenticator(
            introspector: LocalIntrospector(sessions: sessions), certificates: certificateReader, realm: server.realm,
            limiters: dependencies.rateLimiters)
        limiters = dependencies.rateLimiters
        origins = dependencies.origins
    }

    public func addRoutes(to router: LimitedRoutes) {
        ClientController(
            sessions: sessions, certificates: certificates, certificateReader: certificateReader,
            authenticator: sessionAuthenticator, limiters: limiters, endings: endings,
            trustedProxies: server.trustedProxies
        ).addRoutes(to: router)
        AdminController(
            apps: sessions.apps, sessions: sessions.sessions, endings: endings, operatorToken: settings.operatorToken,
            origins: origins, sync: sync
        ).addRoutes(to: router)
        ServerAPIController(apps: sessions.apps, origins: origins).addRoutes(to: router)
        InternalController(sessions: sessions, endings: endings, tokens: server.internalTokens).addRoutes(to: router)
    }

    public var backgroundServices: [any Service] {
        [ExpiredRowsCleaner(sessions: sessions), ClaimsReporterService(reporter: reporter)]
    }

    /// The apps' allowed origins come from this service's own tables.
    public var appOrigins: (any AppOriginSource)? { sessions.apps }
    public var sessionCheck: SessionAuthenticator? { sessionAuthenticator }

    public func prepare(logger: Logger) async throws {
        try await certificates.prepare(logger: logger)
    }

    /// A server with TLS accepts the device certificates this service issued.
    public var clientCertificateVerifier: (@Sendable ([[UInt8]]) async -> Bool)? {
        let certificates = self.certificates
        return { chain in
            guard let leaf = chain.first else { return false }
            return certificates.isIssuedByUs(der: leaf)
        }
    }
}
