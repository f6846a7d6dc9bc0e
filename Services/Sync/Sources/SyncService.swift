import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// The sync service: conversations, messages, rich content, receipts, identities, announcements
/// and the per-user changelog. It checks sessions and Server API tokens with the auth service
/// over internal HTTP and never reads the auth schema.
public struct SyncService: ConfigurableService {
    public static let name = InternalAPI.Service.sync
    public static let defaultPort = 8082
    /// The auth service (sign-ins, ended sessions) and the VoIP service (rings, blocks).
    public static let internalCallers = [InternalAPI.Service.auth, InternalAPI.Service.voip]
    public static var migrations: MigrationRunner { syncMigrations }
    /// Its `openapi.yaml` with the shared part.
    public static let openAPI = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "sync")
    public var links: [(rel: String, path: String)] { [("conversations", "/conversations"), ("content", "/content")] }

    let settings: SyncSettings
    let domain: SyncDomain
    let repositories: SyncRepositories
    /// Who messaged whom, reported to the name resolution service's graph.
    let relationships: RelationshipReporter
    let sessionAuthenticator: SessionAuthenticator
    let appTokens: any AppTokenVerifier
    let auth: InternalClient
    let push: Push
    let internalTokens: InternalTokens
    let uploads: UploadSlots
    let schedules = Alarm()
    /// Wakes this replica's export worker.
    let exportRequests = Alarm()
    /// Wakes this replica's webhook verifier.
    let verifications = Alarm()
    /// Wakes this replica's webhook deliverer.
    let deliveries = Alarm()
    /// Wakes this replica's push-notification sender.
    let pushJobs = PushJobAlarm()
    /// Where the resources in webhook payloads point.
    let publicBaseURL: @Sendable () -> String
    let origins: AllowedOrigins

    public init(settings: SyncSettings, dependencies: ServiceDependencies) {
        let server = dependencies.server
        let postgres = dependencies.postgres
        self.settings = settings
        let repositories = SyncRepositories(postgres: postgres)
        self.repositories = repositories
        let token = server.internalTokens.token(of: Self.name)
        let names = dependencies.optionalPeerURL(InternalAPI.Service.names, configured: settings.namesURL).map {
            InternalClient(baseURL: $0, token: token, http: dependencies.http)
        }
        relationships = RelationshipReporter(names: names)
        let views = Views(
            links: ContentLinks(secret: settings.contentLinkSecret),
            pushURLs: PushURLTemplate(secret: settings.contentLinkSecret),
            publicBaseURL: server.publicBaseURL, tls: server.tlsCertificatePath != nil)
        let authURL = dependencies.peerURL(InternalAPI.Service.auth, configured: settings.authURL)
        auth = InternalClient(baseURL: authURL, token: token, http: dependencies.http)
        domain = SyncDomain(
            repositories: repositories, views: views, relationships: relationships, auth: auth,
            contentSettings: RichContent.Settings(quotaBytes: settings.contentQuotaBytes), schedules: schedules,
            exportRequests: exportRequests,
            webhooks: .init(
                secrets: SealedSecrets.webhooks(serviceSecret: settings.contentLinkSecret),
                targets: WebhookTargets(privateTargets: settings.webhookPrivateTargets), verifications: verifications,
                deliveries: deliveries,
                delivery: .init(
                    timeout: settings.webhookTimeout, retryWindow: settings.webhookRetryWindow, keep: settings.webhookKeep,
                    privateTargets: settings.webhookPrivateTargets)),
            pushNotifications: PushNotifications(
                repositories: repositories, secrets: .pushKeys(serviceSecret: settings.contentLinkSecret), alarm: pushJobs))
        sessionAuthenticator = .remote(auth: auth, server: server, limiters: dependencies.rateLimiters)
        push = Push(
            settings: settings.push, repositories: repositories, postgres: postgres, links: views.links,
            template: views.pushURLs, introspector: sessionAuthenticator.sessionIntrospector, jobAlarm: pushJobs,
            webhookEvents: deliveries)
        internalTokens = server.internalTokens
        uploads = UploadSlots(limit: settings.uploadsPerUser)
        appTokens = dependencies.appTokenVerifier(auth: auth)
        origins = dependencies.origins
        let ownURL = dependencies.peerURL(Self.name, configured: "http://127.0.0.1:\(server.port)")
        publicBaseURL = { server.publicBaseURL ?? ownURL() }
    }

    public func addRoutes(to router: LimitedRoutes) {
        let client = router.group()
            .add(middleware: AcceptHeaderMiddleware())
            .add(middleware: sessionAuthenticator)
        ClientController(domain: domain).addRoutes(to: client)
        FollowingController(domain: domain).addRoutes(to: client)
        ChannelController(domain: domain).addRoutes(to: client)
        PushTokenController(domain: domain).addRoutes(to: client)
        SyncController(domain: domain).addRoutes(to: client)
        AnnouncementController(domain: domain).addRoutes(to: client)
        let content = ContentController(domain: domain, settings: settings, uploads: uploads, origins: origins)
        content.addRoutes(to: client)
        content.addSignedRoutes(to: router)
        ServerAPIController(domain: domain, appTokens: appTokens, content: content).addRoutes(to: router)
        WebhookController(domain: domain, appTokens: appTokens).addRoutes(to: router)
        let streamAuthenticator = sessionAuthenticator.acceptingQueryToken()
        let streams = router.group().add(middleware: streamAuthenticator)
        WebSocketController(push: push, domain: domain, authenticator: streamAuthenticator, origins: origins)
            .addRoutes(to: streams)
        EventsController(push: push, domain: domain, origins: origins).addRoutes(to: streams)
        // What other services of the suite call, each route with the internal tokens of its callers.
        let fromAuth = router.group("internal/v1")
            .add(middleware: InternalCallerMiddleware(accepting: [InternalAPI.Service.auth], tokens: internalTokens))
        let fromVoIP = router.group("internal/v1")
            .add(middleware: InternalCallerMiddleware(accepting: [InternalAPI.Service.voip], tokens: internalTokens))
        SignalsController(push: push).addRoutes(to: fromVoIP)
        SessionsEndedController(push: push).addRoutes(to: fromAuth)
        InternalController(domain: domain).addRoutes(to: fromAuth)
        InternalController(domain: domain).addCallRoutes(to: fromVoIP)
    }

    public func addWebSocketRoutes(to router: Router<LayerRequestContext>) {
        WebSocketController(
            push: push, domain: domain, authenticator: sessionAuthenticator.acceptingQueryToken(), origins: origins
        ).addWebSocketRoutes(to: router)
    }

    public var webSocketLimits: WebSocketLimits? {
        WebSocketLimits(maxFrameSize: settings.push.maxFrame, heartbeat: settings.push.heartbeat)
    }

    public var backgroundServices: [any Service] {
        push.services(logger: Logger(label: "layer-sync.push"))
            + [
                ContentCollector(
                    content: repositories.content, grace: settings.contentGrace, logger: Logger(label: "layer-sync.content")),
                relationships.service(logger: Logger(label: "layer-sync.relationships")),
                ExportWorker(
                    exports: repositories.exports, alarm: exportRequests, logger: Logger(label: "layer-sync.exports")),
                ScheduledSender(
                    sends: domain.scheduled, push: push, alarm: schedules, logger: Logger(label: "layer-sync.scheduled")),
                WebhookVerifier(
                    repository: repositories.webhooks, alarm: verifications, http: .webhooks,
                    logger: Logger(label: "layer-sync.webhooks")),
                WebhookDeliverer(
                    domain: domain, repository: repositories.webhooks,
                    secrets: SealedSecrets.webhooks(serviceSecret: settings.contentLinkSecret), alarm: deliveries,
                    http: .webhooks,
                    baseURL: publicBaseURL, logger: Logger(label: "layer-sync.webhooks")),
                PushNotifier(
                    repository: repositories.pushNotifications,
                    senders: ProviderSenders(
                        secrets: .pushKeys(serviceSecret: settings.contentLinkSecret), settings: settings.pushProviders),
                    settings: settings.pushProviders, alarm: pushJobs, logger: Logger(label: "layer-sync.notifications")),
            ]
    }

    /// This replica must be on record before its first device is.
    public func prepare(logger: Logger) async throws {
        try await push.repositories.devices.registerReplica(push.hub.replicaID, logger: logger)
    }

    /// Sessions and the apps' allowed origins are the auth service's.
    public var appOrigins: (any AppOriginSource)? { RemoteAppOrigins(auth: auth) }
    public var sessionCheck: SessionAuthenticator? { sessionAuthenticator }

    public var readiness: [String: OperationalRoutes.Check] { ["auth": auth.authReadinessCheck] }
}
