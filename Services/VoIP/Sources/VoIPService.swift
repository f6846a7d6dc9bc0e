import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer
import Logging
import ServiceLifecycle

/// The VoIP signalling service: calls from one user to another, rung on every device of the
/// callee through the sync service's push, first answer wins; call history; TURN credentials;
/// and the STUN server that tells each device its public address. Media never passes through it.
public struct VoIPService: ConfigurableService {
    public static let name = InternalAPI.Service.voip
    public static let defaultPort = 8084
    public static var migrations: MigrationRunner { voipMigrations }
    /// Its `openapi.yaml` with the shared part.
    public static let openAPI = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "voip")
    public var links: [(rel: String, path: String)] { [("calls", "/calls")] }

    let settings: VoIPSettings
    let sessionAuthenticator: SessionAuthenticator
    /// The same check without the introspection cache, for TURN credentials: a session that
    /// ended gets none, not even within the cache time.
    let freshSessionAuthenticator: SessionAuthenticator
    let auth: InternalClient
    let calls: Calls
    let placements: RateLimiter
    /// The STUN server's port: the configured one, or the one bound when that was 0.
    let stunPort: BoundPort

    public init(settings: VoIPSettings, dependencies: ServiceDependencies) {
        let server = dependencies.server
        self.settings = settings
        stunPort = BoundPort(settings.stunPort)
        let token = server.internalTokens.token(of: Self.name)
        auth = InternalClient(
            baseURL: dependencies.peerURL(InternalAPI.Service.auth, configured: settings.authURL), token: token,
            http: dependencies.http)
        let sync = InternalClient(
            baseURL: dependencies.peerURL(InternalAPI.Service.sync, configured: settings.syncURL), token: token,
            http: dependencies.http)
        let names = dependencies.optionalPeerURL(InternalAPI.Service.names, configured: settings.namesURL).map {
            InternalClient(baseURL: $0, token: token, http: dependencies.http)
        }
        sessionAuthenticator = .remote(auth: auth, server: server, limiters: dependencies.rateLimiters)
        freshSessionAuthenticator = .remote(auth: auth, server: server, limiters: dependencies.rateLimiters, cached: false)
        placements = RateLimiter(.init(rate: Double(settings.callsPerMinute) / 60, burst: Double(settings.callsPerMinute)))
        calls = Calls(
            repository: CallRepository(postgres: dependencies.postgres), signals: CallSignals(sync: sync),
            knownUsers: KnownUsers(auth: auth), blocks: CallBlocks(sync: sync),
            relationships: RelationshipReporter(names: names), ringSeconds: settings.ringTimeoutSeconds)
    }

    public func addRoutes(to router: LimitedRoutes) {
        let client = router.group()
            .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.layerline))
            .add(middleware: sessionAuthenticator)
        CallsController(calls: calls, placements: placements).addRoutes(to: client)
        let freshlyChecked = router.group()
            .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.layerline))
            .add(middleware: freshSessionAuthenticator)
        TurnController(
            secret: settings.turnSecret, uris: settings.turnURIs, ttlSeconds: settings.turnTTLSeconds,
            stunPort: { [stunPort] in stunPort.value }
        ).addRoutes(to: freshlyChecked)
    }

    public var backgroundServices: [any Service] {
        [
            STUNServer(
                host: settings.stunHost, port: settings.stunPort, sourceLimit: settings.stunSourceLimit,
                logger: Logger(label: "layer-voip.stun"), onBound: { [stunPort] in stunPort.value = $0 }),
            CallSweeper(
                calls: calls, graceSeconds: settings.callerGraceSeconds,
                logger: Logger(label: "layer-voip.calls")),
            calls.relationships.service(logger: Logger(label: "layer-voip.relationships")),
        ]
    }

    /// Sessions and the apps' allowed origins are the auth service's.
    public var appOrigins: (any AppOriginSource)? { RemoteAppOrigins(auth: auth) }
    public var sessionCheck: SessionAuthenticator? { sessionAuthenticator }

    public var readiness: [String: OperationalRoutes.Check] { ["auth": auth.authReadinessCheck] }
}
