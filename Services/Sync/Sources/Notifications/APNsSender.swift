import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore

/// Sends one app's pushes to APNs over HTTP/2 with token-based authentication: each request
/// carries a provider JWT (ES256, signed with the app's `.p8` key; `kid` the key id, `iss` the
/// team, `iat` when it was made), reused until it is due for renewal, since APNs refuses tokens
/// older than an hour and renewals more often than every 20 minutes.
struct APNsSender: Sendable {
    let baseURL: String
    let tokens: APNsProviderToken

    init(credentials: PushCredentials, settings: PushProviderSettings) throws {
        guard case .apns(let team, let keyID, _, let sandbox, let pem) = credentials else {
            preconditionFailure("APNs credentials expected")
        }
        baseURL = sandbox ? settings.apnsSandboxURL : settings.apnsURL
        tokens = try APNsProviderToken(teamID: team, keyID: keyID, pem: pem, lifetime: settings.providerTokenLifetime)
    }

    struct Answer: Decodable { var reason: String? }

    func send(_ push: RenderedPush, http: HTTPClient, timeout: Duration) async -> PushOutcome {
        var stale: String?
        for _ in 0..<2 {
            let token: String
            do { token = try await tokens.token(renewing: stale) } catch {
                return .credentialsRefused(status: nil, reason: "The key could not sign a provider token: \(error)")
            }
            var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(push.token)")
            request.method = .POST
            request.headers.add(name: "authorization", value: "bearer \(token)")
            for (name, value) in push.headers.sorted(by: { $0.key < $1.key }) { request.headers.add(name: name, value: value) }
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: push.body))
            let refusal: PushRefusal
            do {
                guard let refused = try await http.pushRequest(request, timeout: timeout) else { return .sent }
                refusal = refused
            } catch {
                return .retry(status: nil, reason: "APNs did not answer: \(error)", retryAfter: nil)
            }
            let (status, retryAfter) = (refusal.status, refusal.retryAfter)
            let reason = (try? JSONDecoder().decode(Answer.self, from: refusal.body))?.reason ?? "HTTP \(status)"
            switch (status, reason) {
            case (403, "ExpiredProviderToken") where stale == nil:
                stale = token  // made again once, then tried again at once
            case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
                return .tokenGone(status: status, reason: reason)
            case (403, _), (400, "TopicDisallowed"), (400, "BadTopic"), (400, "MissingTopic"):
                return .credentialsRefused(status: status, reason: reason)
            case (429, _), (500..., _):
                return .retry(status: status, reason: reason, retryAfter: retryAfter)
            default:
                return .rejected(status: status, reason: reason)
            }
        }
        return .credentialsRefused(status: 403, reason: "ExpiredProviderToken")
    }
}

/// The provider JWT of one APNs key, made once and reused for its lifetime (50 minutes), or made
/// again when APNs says it expired.
actor APNsProviderToken {
    struct Claims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private let keys = JWTKeyCollection()
    private let key: ES256PrivateKey
    private var keyAdded = false
    private let teamID: String
    private let keyID: String
    private let lifetime: Duration
    private var current: (token: String, madeAt: ContinuousClock.Instant)?

    init(teamID: String, keyID: String, pem: String, lifetime: Duration) throws {
        self.teamID = teamID
        self.keyID = keyID
        self.lifetime = lifetime
        key = try ES256PrivateKey(pem: pem)
    }

    private var signing: Task<String, any Error>?

    /// The current token, or a new one when it is due or is `stale` (the one APNs refused).
    /// Pushes that need a new one at once wait for the same one: APNs refuses tokens changed too often.
    func token(renewing stale: String? = nil) async throws -> String {
        if let current, current.token != stale, ContinuousClock.now - current.madeAt < lifetime {
            return current.token
        }
        if let signing { return try await signing.value }
        let task = Task { try await self.sign() }
        signing = task
        defer { signing = nil }
        let made = try await task.value
        current = (made, ContinuousClock.now)
        return made
    }

    private func sign() async throws -> String {
        let kid = JWKIdentifier(string: keyID)
        if !keyAdded {
            await keys.add(ecdsa: key, kid: kid)
            keyAdded = true
        }
        return try await keys.sign(Claims(iss: teamID, iat: Int(Date().timeIntervalSince1970)), kid: kid)
    }
}
