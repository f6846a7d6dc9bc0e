import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// CORS for every route of the listener (the outermost responder, so that every answer of the
/// routes, errors included, is covered). A request without `Origin` passes untouched.
///
/// - A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is
///   answered here, 204, whatever the path. From another origin it goes on to the routes, which
///   answer it as any `OPTIONS` (405) unless one answers preflights of its own (the signed
///   content URLs, for the `Upload-Origin` of their upload).
/// - Any other request is answered by the routes; the answer carries the CORS headers when the
///   origin is allowed for the app the request turned out to be made for (``CrossOriginGrant``),
///   and none otherwise: the browser then withholds it from the page.
public struct CrossOriginResponder<Base: HTTPResponder>: HTTPResponder where Base.Context == LayerRequestContext {
    public typealias Context = LayerRequestContext
    let base: Base
    let origins: AllowedOrigins

    public init(_ base: Base, origins: AllowedOrigins) {
        self.base = base
        self.origins = origins
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        if let refused = request.headers[.refusedUpgradeOrigin] {
            return try AllowedOrigins.refusal(origin: refused).response(from: request, context: context)
        }
        guard let origin = request.headers[.origin] else { return try await base.respond(to: request, context: context) }
        if CrossOrigin.isPreflight(request), await origins.allows(origin, app: nil, logger: context.logger) {
            return CrossOrigin.preflight(request, origin: origin)
        }
        var response = try await base.respond(to: request, context: context)
        guard response.headers[.accessControlAllowOrigin] == nil else { return response }
        let grant = context.crossOrigin.granted
        var allowed = grant.origin.flatMap(OriginRule.init)?.matches(origin) ?? false
        if !allowed { allowed = await origins.allows(origin, app: grant.app, logger: context.logger) }
        if allowed {
            CrossOrigin.allow(&response, origin: origin)
        } else {
            response.headers.append(HTTPField(name: .vary, value: "Origin"))
        }
        return response
    }
}

extension HTTPField.Name {
    static let refusedUpgradeOrigin = Self(UpgradeOriginGate.refusedHeader)!
}

/// What a request learns on its way that decides its CORS headers: the app it is made for (set by
/// the session and Server API token checks), or an origin a route allows by itself.
public final class CrossOriginGrant: Sendable {
    private let state = Mutex<(app: UUID?, origin: String?)>((nil, nil))

    public init() {}

    var granted: (app: UUID?, origin: String?) { state.withLock { $0 } }

    /// The request is made for `app`: its allowed origins count.
    public func madeFor(app: UUID) { state.withLock { $0.app = app } }

    /// The route allows `origin` itself (signed content URLs allow their `Upload-Origin`).
    public func allow(origin: String) { state.withLock { $0.origin = origin } }
}

/// The headers of the suite's CORS answers.
public enum CrossOrigin {
    public static let methods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"
    /// What browsers may send besides the headers that never need leave: the API's own, those of
    /// the original SDKs (`layer-xdk-version`, `client-id`) and of rich-content uploads.
    static let headers: [String] = [
        "Accept", "Authorization", "Content-Type", "If-None-Match", "X-HTTP-Method-Override", "X-Request-Id",
        "Last-Event-ID", "layer-xdk-version", "client-id", "Upload-Content-Type", "Upload-Content-Length",
        "Upload-Origin",
    ]
    /// Families of headers allowed by prefix (`Layer-*`, `Upload-*`).
    static let headerPrefixes = ["layer-", "upload-", "x-layer-"]
    /// What the page may read of an answer besides the always readable ones.
    public static let exposed = [
        "Layer-Count", "Layer-Conversation-Is-Syncing", "Link", "Location", "WWW-Authenticate", "X-Request-Id",
        "Retry-After", "X-Layer-User-ID", "X-Layer-Session-Token", "X-Layer-Session-TTL", "Allow", "Content-Disposition",
    ].joined(separator: ", ")
    /// How long a browser may keep a preflight's answer, in seconds.
    public static let maxAge = "3600"

    static let allowedHeaderNames = Set(headers.map { $0.lowercased() })

    public static func isPreflight(_ request: Request) -> Bool {
        request.method == .options && request.headers[.accessControlRequestMethod] != nil
    }

    /// 204 to a preflight from an allowed `origin`: the methods and the requested headers that
    /// may be sent (a header outside them makes the browser give up, as it should).
    public static func preflight(_ request: Request, origin: String) -> Response {
        let requested = request.headers[values: .accessControlRequestHeaders]
            .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var allowed = headers
        for header in requested where !allowedHeaderNames.contains(header.lowercased()) {
            let lowered = header.lowercased()
            if headerPrefixes.contains(where: lowered.hasPrefix) { allowed.append(header) }
        }
        var response = Response(status: .noContent)
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlAllowCredentials] = "true"
        response.headers[.accessControlAllowMethods] = methods
        response.headers[.accessControlAllowHeaders] = allowed.joined(separator: ", ")
        response.headers[.accessControlMaxAge] = maxAge
        response.headers[.vary] = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
        return response
    }

    /// Lets a page on `origin` read `response`.
    public static func allow(_ response: inout Response, origin: String) {
        response.headers[.accessControlAllowOrigin] = origin
        response.headers[.accessControlAllowCredentials] = "true"
        response.headers[.accessControlExposeHeaders] = exposed
        response.headers.append(HTTPField(name: .vary, value: "Origin"))
    }
}
