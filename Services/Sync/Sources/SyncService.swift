import AsyncHTTPClient
import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The sync service's own settings.
public struct SyncSettings: Sendable {
    /// The largest rich-content upload, in bytes.
    public var maxContentBytes: Int

    public init(maxContentBytes: Int = 50 * 1024 * 1024) {
        self.maxContentBytes = maxContentBytes
    }

    public static func read(_ reader: inout SettingsReader) -> SyncSettings {
        SyncSettings(
            maxContentBytes: reader.integer("LAYER_CONTENT_MAX_BYTES", default: 50 * 1024 * 1024, in: 1...(1 << 40)))
    }
}

/// The sync service: conversations, messages, rich content, receipts, identities, announcements
/// and the per-user changelog. It checks sessions and Server API tokens with the auth service
/// over internal HTTP and never reads the auth schema.
public struct SyncService: LayerService {
    public let name = "sync"
    public var migrations: MigrationRunner { syncMigrations }
    public var openAPI: String { syncOpenAPI }
    public var links: [(rel: String, path: String)] { [("conversations", "/conversations"), ("content", "/content")] }

    let settings: SyncSettings
    let context: SyncContext
    let sessionAuthenticator: SessionAuthenticator
    let appTokens: any AppTokenVerifier
    let auth: InternalClient

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
        sessionAuthenticator = SessionAuthenticator(
            introspector: CachingIntrospector(HTTPSessionIntrospector(client: auth), ttl: server.introspectionCacheTTL),
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
