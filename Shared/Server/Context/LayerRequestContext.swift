import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LayerModels
import Logging
import NIOCore
import NIOSSL

/// The request context of every service: the connection it came from and, once the session
/// middleware has run, who is calling.
public struct LayerRequestContext: RequestContext, WebSocketRequestContext, Sendable {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel
    /// Set by a WebSocket route that accepts the upgrade.
    public let webSocket = WebSocketHandlerReference<Self>()
    /// Set by ``SessionAuthenticator`` on routes that need a session.
    public var session: AuthenticatedSession?
    /// Shared by every copy of the context: what the CORS answer depends on.
    public let crossOrigin = CrossOriginGrant()

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    public var requestDecoder: LayerJSONDecoder { LayerJSONDecoder() }
    public var responseEncoder: LayerJSONEncoder { LayerJSONEncoder() }
    /// Routes collect their bodies with their own limits; this is the ceiling for all of them.
    public var maxUploadSize: Int { 64 * 1024 * 1024 }

    /// The session of an authenticated route; a route behind ``SessionAuthenticator`` always has one.
    public func requireSession() throws -> AuthenticatedSession {
        guard let session else { throw APIError(.authenticationRequired, "A session is required.") }
        return session
    }

    /// The peer's IP address, for the trusted-proxy check.
    public var remoteIP: String? { channel.remoteAddress?.ipAddress }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the last address
    /// that proxy appended to `X-Forwarded-For`. What rate limits are keyed on.
    public func clientIP(_ request: Request, trustedProxies: TrustedProxies) -> String {
        let peer = remoteIP ?? "unknown"
        guard trustedProxies.contains(peer), let forwarded = request.headers[.xForwardedFor],
            let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty
        else { return peer }
        return last
    }
}

/// Who made an authenticated request.
public struct AuthenticatedSession: Sendable, Equatable {
    public var userID: String
    public var appID: UUID
    public var identity: InternalAPI.Identity?
    public var expiresAt: Date?
    public var certificateThumbprint: String?

    public init(
        userID: String, appID: UUID, identity: InternalAPI.Identity? = nil, expiresAt: Date? = nil,
        certificateThumbprint: String? = nil
    ) {
        self.userID = userID
        self.appID = appID
        self.identity = identity
        self.expiresAt = expiresAt
        self.certificateThumbprint = certificateThumbprint
    }
}
