import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import HummingbirdTLS
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
    /// Runs after the migrations and before the server accepts requests.
    func prepare(logger: Logger) async throws
}

extension LayerService {
    public var links: [(rel: String, path: String)] { [] }
    public var readiness: [String: OperationalRoutes.Check] { [:] }
    public var backgroundServices: [any Service] { [] }
    public func prepare(logger: Logger) async throws {}
}

/// Serves `services` on one HTTP (or HTTPS) listener over one PostgreSQL pool.
public func buildApplication(
    services: [any LayerService],
    settings: ServerSettings,
    postgres: PostgresClient,
    tls: TLSConfiguration? = nil,
    extraServices: [any Service] = [],
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    logger: Logger
) throws -> some ApplicationProtocol {
    let router = Router(context: LayerRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: ErrorMiddleware())
    router.add(middleware: MetricsMiddleware())
    OperationalRoutes(
        postgres: postgres,
        readiness: services.reduce(into: [:]) { $0.merge($1.readiness) { first, _ in first } },
        openAPI: services.first?.openAPI ?? "",
        links: services.flatMap(\.links)
    ).addRoutes(to: router)
    for service in services {
        service.addRoutes(to: router)
    }

    var app = Application(
        router: router,
        server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
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
/// that also asks clients for a certificate issued by `clientCA` (never requiring one).
public func makeServerTLS(settings: ServerSettings, clientCA: [NIOSSLCertificate]) throws -> TLSConfiguration? {
    guard let certificatePath = settings.tlsCertificatePath, let keyPath = settings.tlsKeyPath else { return nil }
    let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
    let key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
    var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
    if !clientCA.isEmpty {
        configuration.certificateVerification = .optionalVerification
        configuration.trustRoots = .certificates(clientCA)
    }
    return configuration
}
