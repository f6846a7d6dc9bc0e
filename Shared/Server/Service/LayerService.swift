import AsyncHTTPClient
import Hummingbird
import LayerModels
import Logging
import PostgresNIO
import ServiceLifecycle

/// One service of the suite as the host sees it: its schema, its routes and its background work.
/// `layer-<service>` hosts one; `layer dev` hosts them all on one port.
public protocol LayerService: Sendable {
    var name: String { get }
    var migrations: MigrationRunner { get }
    /// Entry points named in the `Link` header of `GET /`.
    var links: [(rel: String, path: String)] { get }
    var openAPI: String { get }
    /// Checks beyond the database for `GET /health/ready`.
    var readiness: [String: OperationalRoutes.Check] { get }
    /// Long-lived work that runs beside the HTTP server, started once the migrations are applied.
    var backgroundServices: [any Service] { get }
    /// Adds the service's routes, each group under its ``RequestLimits``: `routes` has the usual
    /// ones, and a group that needs others takes `routes.with(_:)`.
    func addRoutes(to routes: LimitedRoutes)
    /// Routes that may upgrade to a WebSocket. They are tried only for upgrade requests; one they
    /// decline (by throwing) is answered with the WebSocket library's empty 400, so a route that
    /// wants to say why accepts the upgrade and closes the socket with the reason.
    func addWebSocketRoutes(to router: Router<LayerRequestContext>)
    /// Frame limit and heartbeat of the WebSockets this service accepts.
    var webSocketLimits: WebSocketLimits? { get }
    /// Runs after the migrations and before the server accepts requests.
    func prepare(logger: Logger) async throws
    /// Decides whether a client certificate presented in the TLS handshake (DER, leaf first) is
    /// accepted, for the one service that issues them; nil for the others.
    var clientCertificateVerifier: (@Sendable ([[UInt8]]) async -> Bool)? { get }
    /// Where this service reads the apps' allowed origins from, for the CORS of the whole
    /// listener (the auth service's is taken where it runs).
    var appOrigins: (any AppOriginSource)? { get }
    /// How this service checks a session, for the routes every service serves alike
    /// (`GET /?action=validateConnectionForWebsocket`; the auth service's is taken where it runs).
    var sessionCheck: SessionAuthenticator? { get }
}

extension LayerService {
    public var links: [(rel: String, path: String)] { [] }
    public var readiness: [String: OperationalRoutes.Check] { [:] }
    public var backgroundServices: [any Service] { [] }
    public func prepare(logger: Logger) async throws {}
    public func addWebSocketRoutes(to router: Router<LayerRequestContext>) {}
    public var webSocketLimits: WebSocketLimits? { nil }
    public var clientCertificateVerifier: (@Sendable ([[UInt8]]) async -> Bool)? { nil }
    public var appOrigins: (any AppOriginSource)? { nil }
    public var sessionCheck: SessionAuthenticator? { nil }
}

/// A service of the suite's catalogue: what is known of it before it is built (its name, port,
/// schema and document), how it reads its own settings, and how it is built from them.
public protocol ConfigurableService: LayerService {
    associatedtype Settings: ServiceSettings
    static var name: String { get }
    /// The port of `layer-<name>` when it runs alone.
    static var defaultPort: Int { get }
    static var migrations: MigrationRunner { get }
    static var openAPI: String { get }
    /// The services that call its internal routes: `layer-<name>` needs their tokens, besides
    /// its own (``InternalTokens``).
    static var internalCallers: [String] { get }
    init(settings: Settings, dependencies: ServiceDependencies) throws
}

extension ConfigurableService {
    public static var internalCallers: [String] { [] }
    public var name: String { Self.name }
    public var migrations: MigrationRunner { Self.migrations }
    public var openAPI: String { Self.openAPI }
    public static var executable: String { "layer-\(name)" }

    /// This service with `settings`, to be built once its process has a database pool.
    public static func configured(_ settings: Settings) -> ServicePlan {
        ServicePlan(name: name, migrations: migrations) { try Self(settings: settings, dependencies: $0) }
    }

    /// This service with the settings the environment of `reader` gives it.
    public static func configured(from reader: inout SettingsReader) -> ServicePlan {
        configured(Settings.read(&reader))
    }
}

/// A service's own settings (its peers' URLs included), read once from the environment.
public protocol ServiceSettings: Sendable {
    /// Reads them, collecting every missing or malformed setting in `reader`.
    static func read(_ reader: inout SettingsReader) -> Self
}

/// A service with its settings, ready to be built by the host that serves it.
public struct ServicePlan: Sendable {
    public let name: String
    public let migrations: MigrationRunner
    private let make: @Sendable (ServiceDependencies) throws -> any LayerService

    public init(
        name: String, migrations: MigrationRunner, build: @escaping @Sendable (ServiceDependencies) throws -> any LayerService
    ) {
        self.name = name
        self.migrations = migrations
        self.make = build
    }

    /// The service, built with `dependencies`.
    public func build(_ dependencies: ServiceDependencies) throws -> any LayerService {
        try make(dependencies)
    }

    /// A service that is built already (test services made by hand).
    public init(_ service: any LayerService) {
        self.init(name: service.name, migrations: service.migrations) { _ in service }
    }
}

/// What the host gives every service it builds: the shared settings, the database pool, the HTTP
/// client for calls to other services, where those services are, and the process's rate limiters.
public struct ServiceDependencies: Sendable {
    public let server: ServerSettings
    public let postgres: PostgresClient
    public let http: HTTPClient
    /// One limiter per rule for every service of the process, so that a rule several services
    /// apply (the nonces of every 401 challenge) is one bucket per client, as documented.
    public let rateLimiters: RateLimiters
    /// The web origins allowed to call the listener (the operator's and each app's).
    public let origins: AllowedOrigins
    /// The services that run in this process.
    let hosted: Set<String>
    /// This process's own listener, known once it is bound.
    let listener: LateBoundURL

    public init(
        server: ServerSettings, postgres: PostgresClient, http: HTTPClient = .shared, hosted: Set<String> = [],
        listener: LateBoundURL = LateBoundURL(), rateLimiters: RateLimiters? = nil, origins: AllowedOrigins? = nil
    ) {
        self.server = server
        self.origins = origins ?? AllowedOrigins(operatorRules: server.allowedOrigins)
        self.postgres = postgres
        self.http = http
        self.rateLimiters = rateLimiters ?? RateLimiters(server.rateLimits)
        self.hosted = hosted
        self.listener = listener
    }

    /// Checks the apps' Server API tokens with the auth service at `auth`. Where auth runs in this
    /// process (`layer dev`), every request is checked afresh, so a revoked token is refused at
    /// once as on auth's own routes; elsewhere a valid answer is kept for the introspection cache
    /// time (`LAYER_INTROSPECTION_CACHE_MS`), which bounds how long a revoked token still works.
    public func appTokenVerifier(auth: InternalClient) -> HTTPAppTokenVerifier {
        HTTPAppTokenVerifier(
            client: auth, ttl: hosted.contains(InternalAPI.Service.auth) ? .zero : server.introspectionCacheTTL)
    }

    /// Like ``peerURL(_:configured:)`` for a peer that is optional: nil when it neither runs in
    /// this process nor has a configured URL.
    public func optionalPeerURL(_ name: String, configured: String?) -> (@Sendable () -> String)? {
        guard hosted.contains(name) || configured != nil else { return nil }
        return peerURL(name, configured: configured ?? "")
    }

    /// The base URL of service `name`: this process's own listener when that service runs here
    /// too (as in `layer dev`), else `configured` (the peer URL of the caller's settings). Read
    /// at every call, since the listener's port may be known only after start.
    public func peerURL(_ name: String, configured: String) -> @Sendable () -> String {
        if hosted.contains(name) {
            let listener = self.listener
            return { listener.get() }
        }
        return { configured }
    }
}

/// What a service asks of the WebSockets it accepts.
public struct WebSocketLimits: Sendable {
    public var maxFrameSize: Int
    /// How often to ping an idle socket (a missed pong closes it); nil for never.
    public var heartbeat: Duration?

    public init(maxFrameSize: Int, heartbeat: Duration?) {
        self.maxFrameSize = maxFrameSize
        self.heartbeat = heartbeat
    }

    /// The limits of several services on one listener, whose WebSockets share one configuration:
    /// the largest frame any of them takes (a service that wants less checks its frames itself)
    /// and the most frequent heartbeat any of them asks for.
    static func merging(_ all: [WebSocketLimits]) -> WebSocketLimits? {
        guard let first = all.first else { return nil }
        return all.dropFirst().reduce(first) { merged, next in
            WebSocketLimits(
                maxFrameSize: max(merged.maxFrameSize, next.maxFrameSize),
                heartbeat: [merged.heartbeat, next.heartbeat].compactMap { $0 }.min())
        }
    }
}
