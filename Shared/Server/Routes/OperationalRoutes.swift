import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import Logging
import NIOCore
import PostgresNIO

/// What every service serves besides its API: discovery at `/`, liveness and readiness probes,
/// Prometheus metrics and its OpenAPI document. `openapi-common.yaml` documents these routes once
/// for every service.
public struct OperationalRoutes: Sendable {
    public typealias Check = @Sendable () async -> Bool

    let postgres: PostgresClient
    let readiness: [String: Check]
    let openAPI: String
    let links: [(rel: String, path: String)]
    /// Checks the session of `GET /?action=validateConnectionForWebsocket`; nil where no service
    /// of the listener checks sessions (the route then answers 401).
    let sessionCheck: SessionAuthenticator?
    /// How long one readiness check may take before it counts as down.
    let checkTimeout: Duration

    public init(
        postgres: PostgresClient, readiness: [String: Check], openAPI: String, links: [(rel: String, path: String)],
        sessionCheck: SessionAuthenticator? = nil, checkTimeout: Duration = ServerSettings.defaultReadinessTimeout
    ) {
        self.sessionCheck = sessionCheck
        self.checkTimeout = checkTimeout
        self.postgres = postgres
        self.readiness = readiness
        self.openAPI = openAPI
        self.links = links
    }

    public func addRoutes(to router: LimitedRoutes) {
        router.get("/") { request, context in
            var response = Response(
                status: .ok, headers: [.contentType: MediaType.json], body: .init(byteBuffer: ByteBuffer(string: "{}")))
            let base = request.baseURL
            response.headers[.link] = links.map { "<\(base)\($0.path)>; rel=\($0.rel)" }.joined(separator: ", ")
            // The Web XDK asks this before it opens its WebSocket again: 200 while the session
            // lives, the 401 challenge when it must authenticate first.
            guard request.uri.queryParameters["action"] == "validateConnectionForWebsocket" else { return response }
            guard let sessionCheck else {
                throw APIError(.authenticationRequired, "This server does not check sessions.")
            }
            return try await sessionCheck.handle(request, context: context) { _, _ in response }
        }
        // The web SDKs' online check (`HEAD /ping?client=<version>`): any query, no session.
        router.get("/ping") { _, _ in Response(status: .noContent) }
        router.get("/health/live") { _, _ in
            Self.json(["status": "ok"])
        }
        router.get("/health/ready") { request, context in
            // Every check runs at once and gets under a second: a probe is answered promptly with
            // what is down, even while the database does not answer at all. `?peers=false` checks
            // only the database, what this replica needs itself: an orchestrator's readiness probe,
            // so that one service's outage does not take every replica of the others out of rotation
            // (they answer 503 for what needs the peer, and the rest keeps working).
            var all = readiness
            switch request.uri.queryParameters["peers"] {
            case nil, "true": break
            case "false": all = [:]
            default: throw APIError.invalid("peers", "peers is true (the default) or false.")
            }
            let checkTimeout = self.checkTimeout
            let logger = context.logger
            all["database"] = { (try? await postgres.query("SELECT 1", logger: logger)) != nil }
            let checks = await withTaskGroup(of: (String, Bool).self) { group in
                for (name, check) in all {
                    group.addTask { (name, (try? await withDeadline(checkTimeout) { await check() }) ?? false) }
                }
                return await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 ? "ok" : "unavailable" }
            }
            let ready = checks.values.allSatisfy { $0 == "ok" }
            var response = Self.json([
                "status": ready ? "ok" : "unavailable", "checks": .object(checks.mapValues { .string($0) }),
            ])
            response.status = ready ? .ok : .serviceUnavailable
            if !ready { response.headers[.retryAfter] = "1" }
            return response
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: Observability.registry.emitToBuffer())))
        }
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: openAPI)))
        }
    }

    static func json(_ value: JSONValue) -> Response {
        let data = (try? StreamingJSONEncoder.data(value)) ?? Data()
        return Response(status: .ok, headers: [.contentType: MediaType.json], body: .init(byteBuffer: ByteBuffer(data: data)))
    }
}

extension Request {
    /// `scheme://host` of this request as the client addressed it, for links in responses.
    public var baseURL: String { clientBaseURL(tls: head.scheme == "https") }
}
