import HTTPTypes
import Hummingbird

/// Keeps `X-Forwarded-Proto` and `X-Forwarded-Host` only on requests from a trusted proxy, and
/// only when they hold a scheme (`http`, `https`) and a host name: from anyone else they are
/// removed before any route sees them. The URLs in responses and pushed data are then built from
/// what the client really addressed — the edge's `https://chat.example.com` — rather than the
/// plain HTTP hop between the edge and the service, without `LAYER_PUBLIC_URL`.
public struct ForwardedHeadersMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext

    let trusted: TrustedProxies

    public init(trusted: TrustedProxies) {
        self.trusted = trusted
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let proto = request.headers[.forwardedProto]
        let host = request.headers[.forwardedHost]
        guard proto != nil || host != nil else { return try await next(request, context) }
        let believed = context.remoteIP.map(trusted.contains) ?? false
        let keptProto = believed ? proto.flatMap(Self.scheme) : nil
        let keptHost = believed ? host.flatMap(Self.host) : nil
        // The edge's own headers, as it sends them on every request, pass as they are.
        if keptProto == proto && keptHost == host { return try await next(request, context) }
        var head = request.head
        head.headerFields[.forwardedProto] = keptProto
        head.headerFields[.forwardedHost] = keptHost
        return try await next(Request(head: head, body: request.body), context)
    }

    /// The first (the client's) of a comma-separated list, when it is `http` or `https`.
    static func scheme(_ value: String) -> String? {
        let first = value.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased()
        return first == "http" || first == "https" ? first : nil
    }

    /// The first of a comma-separated list, when it is a host with an optional port.
    static func host(_ value: String) -> String? {
        guard let first = value.split(separator: ",").first?.trimmingCharacters(in: .whitespaces), !first.isEmpty,
            first.utf8.count <= 255,
            first.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]_".contains($0)) })
        else { return nil }
        return first
    }
}

extension Request {
    /// `scheme://host[:port]` of this request as the client addressed it: the trusted edge's
    /// forwarded scheme and host when there is one (``ForwardedHeadersMiddleware`` removed any
    /// other's), else this connection's (`tls`: whether it came over this server's own TLS).
    public func clientBaseURL(tls: Bool) -> String {
        let scheme = headers[.forwardedProto] ?? (tls ? "https" : "http")
        let host = headers[.forwardedHost] ?? head.authority ?? "localhost"
        return "\(scheme)://\(host)"
    }
}
