import Crypto
import Foundation
import LayerModels
import Logging
import Synchronization

/// What the session middleware needs from the auth service. The auth service answers from its own
/// database; every other service asks it over internal HTTP (``HTTPSessionIntrospector``).
public protocol SessionIntrospector: Sendable {
    func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse
    /// Creates a session from an identity token sent inline in `Authorization`.
    func createSession(
        identityToken: String, certificateThumbprint: String?, logger: Logger
    ) async throws -> InternalAPI.CreateSessionResponse
    /// A fresh nonce for the challenge of a 401.
    func challengeNonce(logger: Logger) async throws -> String
}

/// Keeps active introspection answers for a few seconds, so a busy client costs one round trip per
/// `ttl`. Inactive answers are never kept: a client that re-authenticates is let in at once. A
/// session revoked or challenged elsewhere stops working here within `ttl`.
public final class CachingIntrospector: SessionIntrospector {
    private struct Entry {
        var response: InternalAPI.IntrospectResponse
        var until: ContinuousClock.Instant
    }

    let base: any SessionIntrospector
    let ttl: Duration
    let capacity: Int
    private let entries = Mutex<[SHA256Digest: Entry]>([:])

    public init(_ base: any SessionIntrospector, ttl: Duration, capacity: Int = 100_000) {
        self.base = base
        self.ttl = ttl
        self.capacity = capacity
    }

    public func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        let key = SHA256.hash(data: Data(token.utf8))
        let now = ContinuousClock.now
        if let hit = entries.withLock({ $0[key] }), hit.until > now {
            if let expiresAt = hit.response.expiresAt, expiresAt <= Date() { return .inactive("expired") }
            return hit.response
        }
        let response = try await base.introspect(token: token, logger: logger)
        entries.withLock { entries in
            if response.active {
                if entries.count >= capacity {
                    entries = entries.filter { $0.value.until > now }
                    if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
                }
                entries[key] = Entry(response: response, until: now + ttl)
            } else {
                entries[key] = nil
            }
        }
        return response
    }

    public func createSession(
        identityToken: String, certificateThumbprint: String?, logger: Logger
    ) async throws -> InternalAPI.CreateSessionResponse {
        try await base.createSession(
            identityToken: identityToken, certificateThumbprint: certificateThumbprint, logger: logger)
    }

    public func challengeNonce(logger: Logger) async throws -> String {
        try await base.challengeNonce(logger: logger)
    }
}

/// Asks the auth service over internal HTTP.
public struct HTTPSessionIntrospector: SessionIntrospector {
    let client: InternalClient

    public init(client: InternalClient) {
        self.client = client
    }

    public func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        try await client.post(
            InternalAPI.introspectPath, body: InternalAPI.IntrospectRequest(token: token),
            as: InternalAPI.IntrospectResponse.self, idempotent: true, logger: logger)
    }

    public func createSession(
        identityToken: String, certificateThumbprint: String?, logger: Logger
    ) async throws -> InternalAPI.CreateSessionResponse {
        try await client.post(
            InternalAPI.sessionsPath,
            body: InternalAPI.CreateSessionRequest(
                identityToken: identityToken, certificateThumbprint: certificateThumbprint),
            as: InternalAPI.CreateSessionResponse.self, idempotent: false, logger: logger)
    }

    public func challengeNonce(logger: Logger) async throws -> String {
        try await client.post(
            InternalAPI.noncesPath, body: [String: String](), as: InternalAPI.NonceResponse.self,
            idempotent: false, logger: logger
        ).nonce
    }
}
