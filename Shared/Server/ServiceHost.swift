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
    /// Long-lived work that runs beside the HTTP server.
    var backgroundServices: [any Service] { get }
    func addRoutes(to router: Router<LayerRequestContext>)
    /// Routes that may upgrade to a WebSocket. They are tried only for upgrade requests; a request
    /// they decline (by throwing) falls through to the ordinary routes, which answer the error.
    func addWebSocketRoutes(to router: Router<LayerRequestContext>)
    /// Frame limit and heartbeat of the WebSockets this service accepts.
    var webSocketConfiguration: WebSocketServerConfiguration? { get }
    /// Runs after the migrations and before the server accepts requests.
    func prepare(logger: Logger) async throws
}

extension LayerService {
    public var links: [(rel: String, path: String)] { [] }
    public var readiness: [String: OperationalRoutes.Check] { [:] }
    public var backgroundServices: [any Service] { [] }
    public func prepare(logger: Logger) async throws {}
    public func addWebSocketRoutes(to router: Router<LayerRequestContext>) {}
    public var webSocketConfiguration: WebSocketServerConfiguration? { nil }
}

/// Serves `services` on one HTTP (or HTTPS) listener over one PostgreSQL pool.
public func buildApplication(
    services: [any LayerService],
    settings: ServerSettings,
    postgres: PostgresClient,
    tls: TLSChannelConfiguration? = nil,
    extraServices: [any Service] = [],
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    logger: Logger
) throws -> some ApplicationProtocol {
    _ = Observability.registry  // metrics recorded before the bootstrap would be lost
    let router = Router(context: LayerRequestContext.self, options: .autoGenerateHeadEndpoints)
    let routeTable = RouteTable()
    router.add(middleware: ErrorMiddleware(routes: routeTable))
    router.add(middleware: MetricsMiddleware())
    OperationalRoutes(
        postgres: postgres,
        readiness: services.reduce(into: [:]) { $0.merge($1.readiness) { first, _ in first } },
        // One document of every route this listener serves: each service's alone, or all of them merged.
        openAPI: try OpenAPISpec.suiteDocument(services.map { ($0.name, $0.openAPI) }),
        links: services.flatMap(\.links)
    ).addRoutes(to: router)
    for service in services {
        service.addRoutes(to: router)
    }
    routeTable.load(router)

    let webSocketRouter = Router(context: LayerRequestContext.self)
    for service in services {
        service.addWebSocketRoutes(to: webSocketRouter)
    }
    let http: HTTPServerBuilder = .http1WebSocketUpgrade(
        webSocketRouter: webSocketRouter,
        configuration: .init(ws: services.lazy.compactMap(\.webSocketConfiguration).first ?? .init()))
    var app = Application(
        responder: MethodOverrideResponder(router.buildResponder()),
        server: try tls.map { try .tls(http, configuration: $0) } ?? http,
        configuration: .init(
            address: .hostname(settings.host, port: settings.port),
            serverName: services.map(\.name).joined(separator: "+")),
        services: [postgres] + extraServices + services.flatMap(\.backgroundServices),
        onServerRunning: onServerRunning,
        logger: logger
    )
    app.beforeServerStarts {
        for service in services {
            try await service.migrations.run(on: postgres, logger: logger)
        }
        for service in services {
            try await service.prepare(logger: logger)
        }
    }
    return app
}

/// Loads the server certificate and key files named by the settings into a TLS configuration
/// that asks clients for a certificate without requiring one. A certificate that is presented
/// must pass `verifyClient` (given its DER bytes, leaf first), or the handshake fails.
public func makeServerTLS(
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
