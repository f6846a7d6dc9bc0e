import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// The sync service's own settings.
public struct SyncSettings: Sendable {
    /// The largest rich-content upload, in bytes.
    public var maxContentBytes: Int
    public var push: PushSettings

    public init(maxContentBytes: Int = 50 * 1024 * 1024, push: PushSettings = PushSettings()) {
        self.maxContentBytes = maxContentBytes
        self.push = push
    }

    public static func read(_ reader: inout SettingsReader) -> SyncSettings {
        SyncSettings(
            maxContentBytes: reader.integer("LAYER_CONTENT_MAX_BYTES", default: 50 * 1024 * 1024, in: 1...(1 << 40)),
            push: PushSettings.read(&reader))
    }
}

/// The sync service: conversations, messages, rich content, receipts, identities, announcements
/// and the per-user changelog. It checks sessions and Server API tokens with the auth service
/// over internal HTTP and never reads the auth schema.
public struct SyncService: LayerService {
    public let name = "sync"
    public var migrations: MigrationRunner { syncMigrations }
    public var openAPI: String { Self.openAPIDocument }
    /// Its `openapi.yaml` with the shared part, without a service to ask (`layer openapi`).
    public static let openAPIDocument = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "sync")
    public var links: [(rel: String, path: String)] { [("conversations", "/conversations"), ("content", "/content")] }

    let settings: SyncSettings
    let context: SyncContext
    let sessionAuthenticator: SessionAuthenticator
    let appTokens: any AppTokenVerifier
    let auth: InternalClient
    let push: Push
    let internalToken: String

    /// `authURL` is read at every call, so it may name a listener that is not yet bound.
    public init(
        settings: SyncSettings, server: ServerSettings, postgres: PostgresClient,
        authURL: @escaping @Sendable () -> String, http: HTTPClient = .shared
    ) {
        self.settings = settings
        let store = SyncStore(postgres: postgres)
        context = SyncContext(
            store: store, links: ContentLinks(secret: server.internalToken), identities: IdentityRecorder(store: store),
            publicBaseURL: server.publicBaseURL, tls: server.tlsCertificatePath != nil)
        auth = InternalClient(baseURL: authURL, token: server.internalToken, http: http)
        let introspector = CachingIntrospector(HTTPSessionIntrospector(client: auth), ttl: server.introspectionCacheTTL)
        push = Push(
            settings: settings.push, store: store, postgres: postgres, links: context.links, introspector: introspector)
        internalToken = server.internalToken
        sessionAuthenticator = SessionAuthenticator(
            introspector: introspector,
            certificates: ClientCertificateReader(
                tlsEnabled: server.tlsCertificatePath != nil, trustedProxies: server.trustedProxies),
            realm: server.realm, allowsQueryToken: true)
        appTokens = HTTPAppTokenVerifier(client: auth, ttl: server.introspectionCacheTTL)
    }

    public func addRoutes(to router: Router<LayerRequestContext>) {
        let client = router.group()
            .add(middleware: AcceptHeaderMiddleware())
            .add(middleware: sessionAuthenticator)
        ClientController(service: context).addRoutes(to: client)
        SyncController(service: context).addRoutes(to: client)
        AnnouncementController(service: context).addRoutes(to: client)
        let content = ContentController(service: context, maxBytes: settings.maxContentBytes)
        content.addRoutes(to: client)
        content.addSignedRoutes(to: router)
        ServerAPIController(service: context, appTokens: appTokens).addRoutes(to: router)
        let streams = router.group().add(middleware: sessionAuthenticator)
        WebSocketController(push: push, service: context, authenticator: sessionAuthenticator).addRoutes(to: streams)
        EventsController(push: push, service: context).addRoutes(to: streams)
        SignalsController(push: push, internalToken: internalToken).addRoutes(to: router)
    }

    public func addWebSocketRoutes(to router: Router<LayerRequestContext>) {
        WebSocketController(push: push, service: context, authenticator: sessionAuthenticator)
            .addWebSocketRoutes(to: router)
    }

    public var webSocketConfiguration: WebSocketServerConfiguration? {
        WebSocketServerConfiguration(
            maxFrameSize: settings.push.maxFrame, autoPing: .enabled(timePeriod: settings.push.heartbeat))
    }

    public var backgroundServices: [any Service] { push.services(logger: Logger(label: "layer-sync.push")) }

    /// This replica must be on record before its first device is.
    public func prepare(logger: Logger) async throws {
        try await push.store.registerReplica(push.hub.replicaID, logger: logger)
    }

    public var readiness: [String: OperationalRoutes.Check] {
        let auth = self.auth
        return ["auth": {
            let answer = try? await auth.post(
                InternalAPI.appTokensPath, body: InternalAPI.AppTokenRequest(appID: UUID(), token: "readiness-probe"),
                as: InternalAPI.AppTokenResponse.self, idempotent: false, logger: Logger(label: "sync.readiness"))
            return answer != nil
        }]
    }
}
