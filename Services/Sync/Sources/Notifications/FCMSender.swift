import AsyncHTTPClient
import Foundation
import JWTKit
import LayerModels
import NIOCore

/// Sends one app's pushes through FCM's HTTP v1 API (`POST /v1/projects/<project>/messages:send`)
/// with an OAuth 2.0 access token of the app's service account: a JWT (RS256) the account signs
/// is exchanged for the token at Google's token endpoint, and the token is used until shortly
/// before it expires, or until FCM refuses it.
struct FCMSender: Sendable {
    let sendURL: String
    let tokens: FCMAccessToken

    init(credentials: PushCredentials, settings: PushProviderSettings) throws {
        guard case .fcm(let project, let email, let keyID, let pem) = credentials else {
            preconditionFailure("FCM credentials expected")
        }
        let path = project.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_", "."])) ?? project
        sendURL = "\(settings.fcmURL)/v1/projects/\(path)/messages:send"
        tokens = try FCMAccessToken(clientEmail: email, keyID: keyID, pem: pem, tokenURL: settings.fcmTokenURL)
    }

    /// Google's error body: `{"error": {"code", "message", "status", "details": [{"@type", "errorCode"}]}}`.
    struct Answer: Decodable {
        struct Failure: Decodable {
            var code: Int?
            var message: String?
            var status: String?
            var details: [JSONValue]?
        }
        var error: Failure?

        /// The FCM error code of the details, else the status.
        var reason: String? {
            for detail in error?.details ?? [] {
                if let code = detail["errorCode"]?.stringValue { return code }
            }
            return error?.status
        }
    }

    func send(_ push: RenderedPush, http: HTTPClient, timeout: Duration) async -> PushOutcome {
        var stale: String?
        for _ in 0..<2 {
            let token: String
            switch await tokens.token(http: http, timeout: timeout, renewing: stale) {
            case .success(let value): token = value
            case .failure(let outcome): return outcome
            }
            var request = HTTPClientRequest(url: sendURL)
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer \(token)")
            request.headers.add(name: "content-type", value: "application/json; charset=utf-8")
            request.body = .bytes(ByteBuffer(string: push.body))
            let refusal: PushRefusal
            do {
                guard let refused = try await http.pushRequest(request, timeout: timeout) else { return .sent }
                refusal = refused
            } catch {
                return .retry(status: nil, reason: "FCM did not answer: \(error)", retryAfter: nil)
            }
            let (status, retryAfter) = (refusal.status, refusal.retryAfter)
            let reason = (try? JSONDecoder().decode(Answer.self, from: refusal.body))?.reason ?? "HTTP \(status)"
            switch (status, reason) {
            case (_, "UNREGISTERED"), (404, _), (_, "SENDER_ID_MISMATCH"):
                return .tokenGone(status: status, reason: reason)
            case (_, "THIRD_PARTY_AUTH_ERROR"), (403, _):
                return .credentialsRefused(status: status, reason: reason)
            case (401, _) where stale == nil:
                stale = token  // exchanged again once, then tried again at once
            case (401, _):
                return .credentialsRefused(status: status, reason: reason)
            case (429, _), (500..., _), (_, "QUOTA_EXCEEDED"), (_, "UNAVAILABLE"), (_, "INTERNAL"):
                return .retry(status: status, reason: reason, retryAfter: retryAfter)
            default:
                return .rejected(status: status, reason: reason)
            }
        }
        return .credentialsRefused(status: 401, reason: "UNAUTHENTICATED")
    }
}

/// The OAuth 2.0 access token of one service account, exchanged for a signed JWT (the JWT bearer
/// grant of RFC 7523) and kept until a minute before it expires.
actor FCMAccessToken {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    struct Claims: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    struct Grant: Decodable {
        var accessToken: String?
        var expiresIn: Int?
        var error: String?
        var errorDescription: String?
        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
            case error
            case errorDescription = "error_description"
        }
    }

    private let keys = JWTKeyCollection()
    private let key: Insecure.RSA.PrivateKey
    private var keyAdded = false
    private let keyID: String?
    private let clientEmail: String
    private let tokenURL: String
    private var current: (token: String, until: ContinuousClock.Instant)?

    init(clientEmail: String, keyID: String?, pem: String, tokenURL: String) throws {
        self.clientEmail = clientEmail
        self.keyID = keyID
        self.tokenURL = tokenURL
        key = try Insecure.RSA.PrivateKey(pem: pem)
    }

    private var exchanging: Task<Result<String, PushOutcome>, Never>?

    /// The current access token, or a new one when it is about to expire or is `stale`; a
    /// failure is what the push it was for becomes. Pushes that need a new token at once wait
    /// for one exchange.
    func token(http: HTTPClient, timeout: Duration, renewing stale: String?) async -> Result<String, PushOutcome> {
        if let current, current.token != stale, ContinuousClock.now < current.until { return .success(current.token) }
        if let exchanging { return await exchanging.value }
        let task = Task { await self.exchange(http: http, timeout: timeout) }
        exchanging = task
        let result = await task.value
        exchanging = nil
        return result
    }

    private func exchange(http: HTTPClient, timeout: Duration) async -> Result<String, PushOutcome> {
        let assertion: String
        do { assertion = try await sign() } catch {
            return .failure(.credentialsRefused(status: nil, reason: "The key could not sign: \(error)"))
        }
        var request = HTTPClientRequest(url: tokenURL)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        let form = "grant_type=\(Self.formEncoded(Self.grantType))&assertion=\(Self.formEncoded(assertion))"
        request.body = .bytes(ByteBuffer(string: form))
        do {
            let response = try await http.execute(request, timeout: .init(timeout))
            let body = try await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            let grant = try? JSONDecoder().decode(Grant.self, from: body)
            if status == 200, let token = grant?.accessToken {
                // Kept until a minute before it expires (an hour, when the answer does not say).
                let seconds = max(0, (grant?.expiresIn ?? 3600) - 60)
                current = (token, ContinuousClock.now + .seconds(seconds))
                return .success(token)
            }
            let reason = grant?.error.map { "token exchange: \($0)" } ?? "token exchange: HTTP \(status)"
            if status == 429 || status >= 500 {
                return .failure(.retry(status: status, reason: reason, retryAfter: response.retryAfter))
            }
            return .failure(.credentialsRefused(status: status, reason: reason))
        } catch {
            return .failure(.retry(status: nil, reason: "The token endpoint did not answer: \(error)", retryAfter: nil))
        }
    }

    private func sign() async throws -> String {
        let kid = keyID.map { JWKIdentifier(string: $0) }
        if !keyAdded {
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: kid)
            keyAdded = true
        }
        let now = Int(Date().timeIntervalSince1970)
        return try await keys.sign(
            Claims(iss: clientEmail, scope: Self.scope, aud: tokenURL, iat: now, exp: now + 3600), kid: kid)
    }

    static func formEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-", "_", ".", "~"])) ?? text
    }
}
