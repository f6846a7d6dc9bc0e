import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The name resolution service: persons and their addresses, address books, visibility policy
/// and relationships. It checks sessions and Server API tokens with the auth service over
/// internal HTTP and never reads another service's schema.
public struct NamesService: ConfigurableService {
    public static let name = InternalAPI.Service.names
    public static let defaultPort = 8083
    public static var migrations: MigrationRunner { namesMigrations }
    /// Who messaged or called whom is reported by the sync and VoIP services.
    public static let internalCallers = [InternalAPI.Service.sync, InternalAPI.Service.voip]
    /// Its `openapi.yaml` with the shared part.
    public static let openAPI = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "names")
    public var links: [(rel: String, path: String)] { [("persons", "/persons"), ("resolve", "/resolve")] }

    let directory: Directory
    let sessionAuthenticator: SessionAuthenticator
    let appTokens: any AppTokenVerifier
    let auth: InternalClient
    let internalTokens: InternalTokens
    /// One budget table per rule for the process (the service is built once per process).
    let userLimits: (resolve: RateLimiter, writes: RateLimiter)

    public init(settings: NamesSettings, dependencies: ServiceDependencies) {
        let server = dependencies.server
        directory = Directory(postgres: dependencies.postgres, defaultRegion: settings.defaultRegion)
        auth = InternalClient(
            baseURL: dependencies.peerURL(InternalAPI.Service.auth, configured: settings.authURL),
            token: server.internalTokens.token(of: Self.name),
            http: dependencies.http)
        sessionAuthenticator = .remote(auth: auth, server: server, limiters: dependencies.rateLimiters)
        appTokens = dependencies.appTokenVerifier(auth: auth)
        internalTokens = server.internalTokens
        userLimits = (
            RateLimiter(.init(rate: settings.resolveRate, burst: max(settings.resolveRate * 3, 1))),
            RateLimiter(.init(rate: settings.writeRate, burst: max(settings.writeRate * 3, 1)))
        )
    }

    public func addRoutes(to router: LimitedRoutes) {
        // Imports read their own body once the caller is authenticated (a Server API import holds
        // up to 10,000 records, 32 MB; a user's 1,000, 4 MB) and bound their own work
        // (``ImportDeadline``): their groups neither read the body first nor hold them to the
        // usual deadline.
        let imports = router.with(.streaming)
        let clientGroup = { (routes: LimitedRoutes) in
            routes.group()
                .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.layerline))
                .add(middleware: sessionAuthenticator)
        }
        let users = PersonsController(
            directory: directory,
            caller: { context in
                let session = try context.requireSession()
                return .user(session.userID, app: session.appID)
            }, limits: userLimits)
        users.addRoutes(to: clientGroup(router))
        users.addImportRoutes(to: clientGroup(imports))
        users.addOwnerRoutes(to: clientGroup(router))

        let serverGroup = { (routes: LimitedRoutes) in
            routes.group("apps/:app")
                .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.layerline))
                .add(middleware: AppTokenMiddleware(verifier: appTokens))
        }
        let backend = PersonsController(directory: directory) { context in
            .server(app: try context.parameters.layerID("app", as: .apps).uuid)
        }
        backend.addRoutes(to: serverGroup(router))
        backend.addImportRoutes(to: serverGroup(imports))
        let server = serverGroup(router)
        server.get("persons/duplicates", use: duplicates)
        SettingsController(directory: directory).addRoutes(to: server)

        let internalRoutes = router.group("internal/v1")
            .add(middleware: InternalCallerMiddleware(accepting: Self.internalCallers, tokens: internalTokens))
        InternalController(relationships: directory.relationships).addRoutes(to: internalRoutes)
    }

    /// `GET /apps/<app>/persons/duplicates?min_probability=0.5&page_size&from_id`: every likely
    /// duplicate pair of the app's store, most likely first, up to 1,000 a page.
    @Sendable func duplicates(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try context.parameters.layerID("app", as: .apps).uuid
        let query = request.uri.queryParameters
        var minimum = Directory.reportedProbability
        if let text = query["min_probability"] {
            guard let value = Double(String(text)), (0...1).contains(value) else {
                throw APIError.invalid("min_probability", "min_probability is a number from 0 to 1.")
            }
            minimum = value
        }
        var pageSize = 1000
        if let text = query["page_size"] {
            guard let value = Int(String(text)), (1...1000).contains(value) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to 1000.")
            }
            pageSize = value
        }
        var from: UUID?
        if let text = query["from_id"] {
            let raw = String(text)
            guard let id = LayerID(parsing: raw.removingPercentEncoding ?? raw, as: .matches) else {
                throw APIError.invalid("from_id", "from_id is a match id (layer:///matches/<uuid>).")
            }
            from = id.uuid
        }
        let page = try await directory.persons.read(logger: context.logger) { connection in
            try await MatchRepository.page(
                app: app, minProbability: minimum, pageSize: pageSize, from: from, connection, context.logger)
        }
        var response = try Response.json(["matches": .array(page.items)] as JSONValue)
        response.headers[.layerCount] = String(page.total)
        return response
    }

    /// Sessions and the apps' allowed origins are the auth service's.
    public var appOrigins: (any AppOriginSource)? { RemoteAppOrigins(auth: auth) }
    public var sessionCheck: SessionAuthenticator? { sessionAuthenticator }

    public var readiness: [String: OperationalRoutes.Check] { ["auth": auth.authReadinessCheck] }
}
