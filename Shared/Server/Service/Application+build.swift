import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import LayerModels
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import UnixSignals

/// Builds `plans` and serves them on one HTTP (or HTTPS, when the settings name a certificate)
/// listener over one PostgreSQL pool: the one composition root of every executable, of the test
/// servers and of the benchmarks. Services hosted together call each other on this listener.
public func buildApplication(
    _ plans: [ServicePlan],
    settings: ServerSettings,
    postgres: PostgresClient,
    http: HTTPClient = .shared,
    extraServices: [any Service] = [],
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    logger: Logger
) throws -> some ApplicationProtocol {
    _ = Observability.registry  // metrics recorded before the bootstrap would be lost
    let listener = LateBoundURL()
    // Built once here, so that every service of the process draws on the same buckets.
    let dependencies = ServiceDependencies(
        server: settings, postgres: postgres, http: http, hosted: Set(plans.map(\.name)), listener: listener,
        rateLimiters: RateLimiters(settings.rateLimits))
    let services = try plans.map { try $0.build(dependencies) }
    // What every route of the listener shares is the auth service's where it runs here.
    let authority = services.filter { $0.name == InternalAPI.Service.auth } + services
    if let source = authority.lazy.compactMap(\.appOrigins).first { dependencies.origins.use(source) }

    let router = Router(context: LayerRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routeTable = RouteTable()
    router.add(middleware: ForwardedHeadersMiddleware(trusted: settings.trustedProxies))
    router.add(middleware: ErrorMiddleware(routes: routeTable))
    router.add(middleware: MetricsMiddleware())
    // Every route reads its body and answers within the limits of its group, the usual ones
    // unless the group says otherwise (``LimitedRoutes/with(_:)``).
    let routes = LimitedRoutes(router, limits: .usual(deadline: settings.requestTimeout))
    OperationalRoutes(
        postgres: postgres,
        readiness: services.reduce(into: [:]) { $0.merge($1.readiness) { first, _ in first } },
        // One document of every route this listener serves: each service's alone, or all of them merged.
        openAPI: try OpenAPISpec.suiteDocument(services.map { ($0.name, $0.openAPI) }),
        links: services.flatMap(\.links), sessionCheck: authority.lazy.compactMap(\.sessionCheck).first,
        checkTimeout: settings.readinessTimeout
    ).addRoutes(to: routes)
    for service in services {
        service.addRoutes(to: routes)
    }
    routeTable.load(router)

    let webSocketRouter = Router(context: LayerRequestContext.self)
    webSocketRouter.add(middleware: ForwardedHeadersMiddleware(trusted: settings.trustedProxies))
    for service in services {
        service.addWebSocketRoutes(to: webSocketRouter)
    }
    let webSocketResponder = webSocketRouter.buildResponder()
    let webSocketLimits = webSocketConfiguration(services.compactMap(\.webSocketLimits))
    let rejectAll: @Sendable ([[UInt8]]) async -> Bool = { _ in false }
    let verifier = services.lazy.compactMap(\.clientCertificateVerifier).first ?? rejectAll
    let tls = try makeServerTLS(settings: settings, verifyClient: verifier)
    let scheme = tls == nil ? "http" : "https"
    let readTimeout = settings.readTimeout
    let origins = dependencies.origins
    let upgradeLogger = logger
    let httpServer = HTTPServerBuilder { responder in
        let http = GuardedChildChannel(
            HTTP1WebSocketUpgradeChannel(
                responder: responder, webSocketResponder: webSocketResponder,
                configuration: .init(http1: .init(idleTimeout: .init(readTimeout)), ws: webSocketLimits)),
            headTimeout: readTimeout,
            allowsUpgradeFrom: { await origins.mayConnect(origin: $0, authority: $1, app: nil, logger: upgradeLogger) })
        guard let tls else { return http }
        return try TLSChannel(http, configuration: tls)
    }
    let migrated = MigrationGate()
    var app = Application(
        responder: RequestIdentityResponder(
            CrossOriginResponder(
                FormQueryResponder(MethodOverrideResponder(router.buildResponder())), origins: dependencies.origins)),
        server: httpServer,
        configuration: .init(
            address: .hostname(settings.host, port: settings.port),
            serverName: services.map(\.name).joined(separator: "+")),
        services: [postgres] + extraServices
            + services.flatMap(\.backgroundServices).map { AfterMigrations(base: $0, gate: migrated) },
        onServerRunning: { channel in
            listener.set("\(scheme)://127.0.0.1:\(channel.localAddress?.port ?? settings.port)")
            await onServerRunning(channel)
        },
        logger: logger
    )
    app.beforeServerStarts {
        for service in services {
            try await service.migrations.run(on: postgres, logger: logger)
        }
        for service in services {
            try await service.prepare(logger: logger)
        }
        migrated.open()
    }
    return app
}

private func webSocketConfiguration(_ limits: [WebSocketLimits]) -> WebSocketServerConfiguration {
    guard let merged = WebSocketLimits.merging(limits) else { return .init() }
    return WebSocketServerConfiguration(
        maxFrameSize: merged.maxFrameSize, autoPing: merged.heartbeat.map { .enabled(timePeriod: $0) } ?? .disabled)
}

/// Loads the server certificate and key files named by the settings into a TLS configuration
/// that asks clients for a certificate without requiring one. A certificate that is presented
/// must pass `verifyClient` (given its DER bytes, leaf first), or the handshake fails.
func makeServerTLS(
    settings: ServerSettings, verifyClient: @escaping @Sendable ([[UInt8]]) async -> Bool
) throws -> TLSChannelConfiguration? {
    guard let certificatePath = settings.tlsCertificatePath, let keyPath = settings.tlsKeyPath else { return nil }
    let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
    let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
    var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
    configuration.certificateVerification = .optionalVerification
    return TLSChannelConfiguration(tlsConfiguration: configuration) { certificates in
        let ders = certificates.compactMap { try? $0.toDERBytes() }
        return await verifyClient(ders) ? .certificateVerified : .failed
    }
}

extension ServiceGroupConfiguration {
    /// How every process of the suite runs its application: a graceful shutdown (on `signals`)
    /// lets requests in progress finish for `settings.shutdownTimeout`, then cancels whatever is
    /// left; whatever ignores the cancellation for `cancellationTimeout` more ends the process,
    /// so that SIGTERM always ends it however stuck a request is. (Test servers, which share
    /// their process with every other test, pass nil.)
    public static func layer(
        _ app: some Service, settings: ServerSettings, signals: [UnixSignal] = [.sigterm, .sigint],
        cancellationTimeout: Duration? = .seconds(5), logger: Logger
    ) -> ServiceGroupConfiguration {
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: signals, logger: logger)
        configuration.maximumGracefulShutdownDuration = settings.shutdownTimeout
        configuration.maximumCancellationDuration = cancellationTimeout
        return configuration
    }
}
