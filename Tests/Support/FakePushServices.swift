import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import LayerModels
import NIOSSL
import ServiceLifecycle
import Synchronization
import _CryptoExtras

/// APNs and FCM as the tests play them: one HTTP/2 server over TLS (a certificate of its own for
/// 127.0.0.1, which the sync service is told to trust) that speaks Apple's provider API
/// (`POST /3/device/<token>`, checking the provider JWT, the `apns-*` headers and the payload
/// size, answering `{"reason"}` errors) and FCM's HTTP v1 API with Google's OAuth token exchange
/// (`POST /token` with a service account's JWT; `POST /v1/projects/<project>/messages:send` with
/// the access token, answering Google's error bodies). Answers can be scripted per device token.
public final class FakePushServices: Sendable {
    public static let teamID = "TEAM123456"
    public static let keyID = "KEY1234567"
    public static let topic = "com.example.chat"
    public static let projectID = "layerline-test"
    public static let clientEmail = "pusher@layerline-test.iam.gserviceaccount.com"

    /// The APNs key (`.p8`, PKCS#8 PEM) and the service account's RSA key, made once per process.
    public static let apnsKey = P256.Signing.PrivateKey()
    static let accountKey: _RSA.Signing.PrivateKey = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    /// One request the server took.
    public struct Request: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: Data
        public var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: body) }
    }

    /// A scripted answer: status, and the APNs reason or FCM error code.
    public struct Answer: Sendable {
        public var status: Int
        public var reason: String
        public var retryAfter: Int?
        public init(_ status: Int, _ reason: String, retryAfter: Int? = nil) {
            self.status = status
            self.reason = reason
            self.retryAfter = retryAfter
        }
    }

    /// Pushes taken (answered 200), in order.
    public let pushes = Mutex<[Request]>([])
    /// Every request to `/3/device` and `messages:send`, whatever was answered.
    public let attempts = Mutex<[Request]>([])
    /// Token exchanges at `/token`.
    public let exchanges = Mutex<[Request]>([])
    /// Answers to give, per device token, before the 200s.
    public let scripted = Mutex<[String: [Answer]]>([:])
    /// The access tokens issued, and how long they last.
    let accessTokens = Mutex<Set<String>>([])
    public let accessTokenLifetime = Mutex(3599)
    public let port = Mutex(0)
    let certificatePath: String

    init(certificatePath: String) {
        self.certificatePath = certificatePath
    }

    public var baseURL: String { "https://127.0.0.1:\(port.withLock { $0 })" }
    /// The PEM file of the server's certificate, for `LAYER_PUSH_CA_FILE`.
    public var caFile: String { certificatePath }

    /// The operator's `PUT /admin/apps/<app>/push/apns` body.
    public static func apnsCredentials(sandbox: Bool = false) -> JSONValue {
        [
            "team_id": .string(teamID), "key_id": .string(keyID), "topic": .string(topic),
            "private_key": .string(apnsKey.pemRepresentation), "environment": sandbox ? "sandbox" : "production",
        ]
    }

    /// The operator's `PUT /admin/apps/<app>/push/fcm` body: the key file as Google gives it.
    public static func fcmCredentials(tokenURL: String) -> JSONValue {
        [
            "service_account": [
                "type": "service_account", "project_id": .string(projectID), "private_key_id": "abc123",
                "private_key": .string(accountKey.pkcs8PEMRepresentation), "client_email": .string(clientEmail),
                "client_id": "1234567890", "token_uri": .string(tokenURL),
            ]
        ]
    }

    public func pushes(to token: String) -> [Request] {
        pushes.withLock { $0.filter { $0.path.hasSuffix("/\(token)") || $0.json?["message"]?["token"]?.stringValue == token } }
    }

    /// Waits until `count` pushes were taken (at most 20 seconds).
    public func waitForPushes(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [Request] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let got = pushes.withLock { $0 }
            if got.count >= count { return got }
            try await Task.sleep(for: .milliseconds(20))
        }
        return pushes.withLock { $0 }
    }

    /// Runs the server on a free port until `body` returns.
    public static func run<T: Sendable>(_ body: @Sendable (FakePushServices) async throws -> T) async throws -> T {
        let identity = try TestTLS.makeServerIdentity()
        defer { identity.remove() }
        let services = FakePushServices(certificatePath: identity.certificatePath)
        let router = Router()
        services.addRoutes(router)
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)],
            privateKey: .privateKey(try NIOSSLPrivateKey(file: identity.keyPath, format: .pem)))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: .test)
        let group = ServiceGroup(services: [app], logger: .test)
        let running = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await running.value
            throw CancellationError()
        }
        services.port.withLock { $0 = port }
        let result: Result<T, any Error>
        do { result = .success(try await body(services)) } catch { result = .failure(error) }
        await group.triggerGracefulShutdown()
        _ = await running.result
        return try result.get()
    }

    private func addRoutes(_ router: Router<BasicRequestContext>) {
        router.post("3/device/:token") { request, context in
            try await self.apns(request, token: try context.parameters.require("token"))
        }
        router.post("token") { request, _ in try await self.exchange(request) }
        router.post("v1/projects/:project/:method") { request, context in
            guard context.parameters.get("method") == "messages:send" else { return Response(status: .notFound) }
            return try await self.fcm(request, project: try context.parameters.require("project"))
        }
    }

    private static func recorded(_ request: Hummingbird.Request) async throws -> Request {
        let body = try await request.body.collect(upTo: 1 << 20)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        headers[":version"] = request.head.scheme == nil ? "1.1" : "2"
        return Request(path: request.uri.path, headers: headers, body: Data(buffer: body))
    }

    private func scriptedAnswer(for token: String) -> Answer? {
        scripted.withLock { answers in
            guard var queue = answers[token], !queue.isEmpty else { return nil }
            let first = queue.removeFirst()
            answers[token] = queue
            return first
        }
    }

    // MARK: APNs

    struct APNsClaims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func apns(_ request: Hummingbird.Request, token: String) async throws -> Response {
        let taken = try await Self.recorded(request)
        attempts.withLock { $0.append(taken) }
        func refuse(_ status: HTTPResponse.Status, _ reason: String) -> Response {
            var body = ["reason": JSONValue.string(reason)]
            if status == .gone { body["timestamp"] = .number((Date().timeIntervalSince1970 * 1000).rounded()) }
            return Response(
                status: status, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: .init(string: JSONValue.object(body).jsonText)))
        }
        // The provider token: `bearer <JWT>`, ES256, kid = the key id, iss = the team, under an hour old.
        guard let authorization = taken.headers["authorization"], authorization.hasPrefix("bearer ") else {
            return refuse(.forbidden, "MissingProviderToken")
        }
        let keys = JWTKeyCollection()
        await keys.add(
            ecdsa: try ES256PublicKey(pem: Self.apnsKey.publicKey.pemRepresentation), kid: JWKIdentifier(string: Self.keyID))
        guard let claims = try? await keys.verify(String(authorization.dropFirst(7)), as: APNsClaims.self),
            claims.iss == Self.teamID
        else { return refuse(.forbidden, "InvalidProviderToken") }
        if Double(claims.iat) < Date().timeIntervalSince1970 - 3600 { return refuse(.forbidden, "ExpiredProviderToken") }
        guard taken.headers["apns-topic"] != nil else { return refuse(.badRequest, "MissingTopic") }
        guard let type = taken.headers["apns-push-type"], ["alert", "background"].contains(type) else {
            return refuse(.badRequest, "InvalidPushType")
        }
        if let priority = taken.headers["apns-priority"], !["5", "10", "1"].contains(priority) {
            return refuse(.badRequest, "BadPriority")
        }
        if type == "background", taken.headers["apns-priority"] != "5" { return refuse(.badRequest, "BadPriority") }
        if let collapse = taken.headers["apns-collapse-id"], collapse.utf8.count > 64 {
            return refuse(.badRequest, "BadCollapseId")
        }
        guard token.allSatisfy(\.isHexDigit) else { return refuse(.badRequest, "BadDeviceToken") }
        guard taken.body.count <= 4096 else { return refuse(.contentTooLarge, "PayloadTooLarge") }
        guard taken.json?["aps"] != nil else { return refuse(.badRequest, "PayloadEmpty") }
        if let answer = scriptedAnswer(for: token) {
            var response = refuse(.init(code: answer.status), answer.reason)
            if let after = answer.retryAfter { response.headers[.retryAfter] = String(after) }
            return response
        }
        pushes.withLock { $0.append(taken) }
        return Response(status: .ok, headers: [HTTPField.Name("apns-id")!: taken.headers["apns-id"] ?? UUID().uuidString])
    }

    // MARK: FCM and Google's OAuth

    struct GoogleAssertion: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func exchange(_ request: Hummingbird.Request) async throws -> Response {
        let taken = try await Self.recorded(request)
        exchanges.withLock { $0.append(taken) }
        func refuse(_ error: String, _ description: String) -> Response {
            Response(
                status: .badRequest, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: .init(
                        string: JSONValue.object(["error": .string(error), "error_description": .string(description)]).jsonText)))
        }
        guard taken.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") == true else {
            return refuse("invalid_request", "Expected application/x-www-form-urlencoded.")
        }
        var form: [String: String] = [:]
        for pair in String(decoding: taken.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"] else {
            return refuse("unsupported_grant_type", "Invalid grant_type.")
        }
        let keys = JWTKeyCollection()
        await keys.add(
            rsa: try Insecure.RSA.PublicKey(pem: Self.accountKey.publicKey.pemRepresentation), digestAlgorithm: .sha256,
            kid: JWKIdentifier(string: "abc123"))
        guard let claims = try? await keys.verify(assertion, as: GoogleAssertion.self), claims.iss == Self.clientEmail
        else { return refuse("invalid_grant", "Invalid JWT Signature.") }
        guard claims.aud == "\(baseURL)/token", claims.scope.contains("https://www.googleapis.com/auth/firebase.messaging")
        else { return refuse("invalid_grant", "Invalid JWT: audience or scope.") }
        guard claims.exp > claims.iat, claims.exp - claims.iat <= 3600 else {
            return refuse("invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes).")
        }
        let token = "ya29.\(UUID().uuidString)"
        accessTokens.withLock { _ = $0.insert(token) }
        let body: JSONValue = [
            "access_token": .string(token), "expires_in": .number(Double(accessTokenLifetime.withLock { $0 })),
            "token_type": "Bearer",
        ]
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: body.jsonText)))
    }

    /// Google's error body, with the FCM error code in its details.
    static func googleError(_ status: Int, _ code: String, _ message: String) -> Response {
        let statuses = [
            400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
            429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
        ]
        let body: JSONValue = [
            "error": [
                "code": .number(Double(status)), "message": .string(message), "status": .string(statuses[status] ?? "UNKNOWN"),
                "details": [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(code)]],
            ]
        ]
        return Response(
            status: .init(code: status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: .init(string: body.jsonText)))
    }

    private func fcm(_ request: Hummingbird.Request, project: String) async throws -> Response {
        let taken = try await Self.recorded(request)
        attempts.withLock { $0.append(taken) }
        guard let authorization = taken.headers["authorization"], authorization.hasPrefix("Bearer "),
            accessTokens.withLock({ $0.contains(String(authorization.dropFirst(7))) })
        else {
            let body: JSONValue = [
                "error": ["code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"]
            ]
            return Response(
                status: .unauthorized, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: .init(string: body.jsonText)))
        }
        guard project == Self.projectID else { return Self.googleError(403, "SENDER_ID_MISMATCH", "SenderId mismatch") }
        guard case .object(let message)? = taken.json?["message"], let token = message["token"]?.stringValue else {
            return Self.googleError(400, "INVALID_ARGUMENT", "The message has no target.")
        }
        if case .object(let data)? = message["data"] {
            for (key, value) in data where value.stringValue == nil {
                return Self.googleError(400, "INVALID_ARGUMENT", "Invalid value at 'message.data[\(key)].value' (TYPE_STRING)")
            }
        }
        guard taken.body.count <= 4096 + 512 else { return Self.googleError(400, "INVALID_ARGUMENT", "Message is too big") }
        if let answer = scriptedAnswer(for: token) {
            var response = Self.googleError(answer.status, answer.reason, "scripted")
            if let after = answer.retryAfter { response.headers[.retryAfter] = String(after) }
            return response
        }
        pushes.withLock { $0.append(taken) }
        let body: JSONValue = ["name": .string("projects/\(project)/messages/\(UInt64.random(in: 1...UInt64.max))")]
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: .init(string: body.jsonText)))
    }
}
