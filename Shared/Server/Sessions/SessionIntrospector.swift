import Crypto
import Foundation
import LayerModels
import Logging
import Synchronization

/// What the session middleware needs from the auth service. The auth service answers from its own
/// database; every other service asks it over internal HTTP (``HTTPSessionIntrospector``).
public protocol SessionIntrospector: Sendable {
    func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse
    /// Each of `tokens`, in their order: the periodic check of every open socket's session asks
    /// for them all at once.
    func introspect(tokens: [String], logger: Logger) async throws -> [InternalAPI.IntrospectResponse]
    /// Drops every answer kept about the sessions of `user` of `app`, which the auth service said
    /// have ended (all or some of them).
    func forget(app: UUID, user: String)
    /// Creates a session from an identity token sent inline in `Authorization`.
    func createSession(
        identityToken: String, certificateThumbprint: String?, logger: Logger
    ) async throws -> InternalAPI.CreateSessionResponse
    /// A fresh nonce for the challenge of a 401.
    func challengeNonce(logger: Logger) async throws -> String
}

extension SessionIntrospector {
    /// An introspector that keeps nothing has nothing to forget.
    public func forget(app: UUID, user: String) {}
}

/// Keeps active introspection answers for a few seconds, so a busy client costs one round trip per
/// `ttl`. Inactive answers are never kept: a client that re-authenticates is let in at once. A
/// session revoked or challenged elsewhere stops working here within `ttl`, and at once when the
/// auth service says so (``forget(app:user:)``).
public final class CachingIntrospector: SessionIntrospector {
    private struct Entry {
        var response: InternalAPI.IntrospectResponse
        /// When the introspection that gave it was asked, and until when it is trusted.
        var asked: ContinuousClock.Instant
        var until: ContinuousClock.Instant
        var owner: Owner?
    }

    /// Whose session an answer is about.
    private struct Owner: Hashable {
        var app: String
        var user: String
    }

    private struct State {
        var entries: [SHA256Digest: Entry] = [:]
        /// When the sessions of a user were last said to have ended, for `ttl`: an answer asked
        /// before that is no longer trusted, even one that arrives afterwards.
        var ended: [Owner: ContinuousClock.Instant] = [:]

        func trusts(_ entry: Entry, now: ContinuousClock.Instant) -> Bool {
            guard entry.until > now else { return false }
            guard let owner = entry.owner, let ended = ended[owner] else { return true }
            return entry.asked > ended
        }
    }

    let base: any SessionIntrospector
    let ttl: Duration
    let capacity: Int
    private let state = Mutex(State())

    public init(_ base: any SessionIntrospector, ttl: Duration, capacity: Int = 100_000) {
        self.base = base
        self.ttl = ttl
        self.capacity = capacity
    }

    public func introspect(token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        let key = SHA256.hash(data: Data(token.utf8))
        let now = ContinuousClock.now
        let hit = state.withLock { state in state.entries[key].flatMap { state.trusts($0, now: now) ? $0 : nil } }
        if let hit {
            if let expiresAt = hit.response.expiresAt, expiresAt <= Date() { return .inactive("expired") }
            return hit.response
        }
        return try await ask(key: key, token: token, logger: logger)
    }

    /// Answers what it trusts, and asks about the rest in one call.
    public func introspect(tokens: [String], logger: Logger) async throws -> [InternalAPI.IntrospectResponse] {
        let keys = tokens.map { SHA256.hash(data: Data($0.utf8)) }
        let now = ContinuousClock.now
        var answers: [InternalAPI.IntrospectResponse?] = state.withLock { state in
            keys.map { key in state.entries[key].flatMap { state.trusts($0, now: now) ? $0.response : nil } }
        }
        let missing = answers.indices.filter { answers[$0] == nil }
        if !missing.isEmpty {
            let asked = ContinuousClock.now
            let fresh = try await base.introspect(tokens: missing.map { tokens[$0] }, logger: logger)
            for (index, response) in zip(missing, fresh) {
                keep(response, key: keys[index], asked: asked)
                answers[index] = response
            }
        }
        let date = Date()
        return answers.map { answer in
            guard let answer else { return .inactive("unknown") }
            if let expiresAt = answer.expiresAt, expiresAt <= date { return .inactive("expired") }
            return answer
        }
    }

    public func forget(app: UUID, user: String) {
        let now = ContinuousClock.now
        let ttl = self.ttl
        state.withLock { state in
            // Answers older than `ttl` are not trusted anyway, so neither are older marks needed.
            state.ended = state.ended.filter { now - $0.value < ttl }
            state.ended[Owner(app: LayerID(.apps, app).uri, user: user)] = now
        }
    }

    private func ask(key: SHA256Digest, token: String, logger: Logger) async throws -> InternalAPI.IntrospectResponse {
        let asked = ContinuousClock.now
        let response = try await base.introspect(token: token, logger: logger)
        keep(response, key: key, asked: asked)
        return response
    }

    /// Keeps an active answer asked at `asked` for ``ttl``; drops what was kept for an inactive one.
    private func keep(_ response: InternalAPI.IntrospectResponse, key: SHA256Digest, asked: ContinuousClock.Instant) {
        state.withLock { state in
            guard response.active else {
                state.entries[key] = nil
                return
            }
            if state.entries.count >= capacity {
                state.entries = state.entries.filter { $0.value.until > asked }
                if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            }
            let owner = response.appID.flatMap { app in response.userID.map { Owner(app: app, user: $0) } }
            state.entries[key] = Entry(response: response, asked: asked, until: asked + ttl, owner: owner)
        }
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

    public func introspect(tokens: [String], logger: Logger) async throws -> [InternalAPI.IntrospectResponse] {
        var answers: [InternalAPI.IntrospectResponse] = []
        for start in stride(from: 0, to: tokens.count, by: InternalAPI.IntrospectManyRequest.limit) {
            let chunk = Array(tokens[start..<min(start + InternalAPI.IntrospectManyRequest.limit, tokens.count)])
            let response = try await client.post(
                InternalAPI.introspectManyPath, body: InternalAPI.IntrospectManyRequest(tokens: chunk),
                as: InternalAPI.IntrospectManyResponse.self, idempotent: true, logger: logger)
            guard response.sessions.count == chunk.count else {
                throw APIError(
                    .internalServerError, "The auth service answered \(response.sessions.count) of \(chunk.count) tokens.")
            }
            answers += response.sessions
        }
        return answers
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
