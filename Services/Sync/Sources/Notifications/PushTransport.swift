import AsyncHTTPClient
import Foundation
import LayerServer
import NIOCore
import NIOSSL
import Synchronization

/// Where the push services answer, and how they are reached. Every endpoint is a setting, so that
/// tests and air-gapped operators can point them at their own servers. Environment:
/// `LAYER_APNS_URL`, `LAYER_APNS_SANDBOX_URL`, `LAYER_FCM_URL`, `LAYER_FCM_TOKEN_URL`,
/// `LAYER_PUSH_CA_FILE` (PEM certificates trusted besides the system's, for such servers) and
/// `LAYER_PUSH_TIMEOUT_MS`.
public struct PushProviderSettings: Sendable {
    public var apnsURL = "https://api.push.apple.com"
    public var apnsSandboxURL = "https://api.sandbox.push.apple.com"
    public var fcmURL = "https://fcm.googleapis.com"
    /// Google's OAuth 2.0 token endpoint, where a service account's JWT is exchanged for an access
    /// token (and the JWT's audience).
    public var fcmTokenURL = "https://oauth2.googleapis.com/token"
    public var caFile: String?
    /// How long one push may take.
    public var timeout: Duration = .seconds(10)
    /// How long an APNs provider token is used before another is made: under the hour after which
    /// APNs refuses it, over the 20 minutes within which it refuses a new one.
    public var providerTokenLifetime: Duration = .seconds(50 * 60)

    public init() {}

    static func read(_ reader: inout SettingsReader) -> PushProviderSettings {
        var settings = PushProviderSettings()
        settings.apnsURL = trimmed(reader.optional("LAYER_APNS_URL") ?? settings.apnsURL)
        settings.apnsSandboxURL = trimmed(reader.optional("LAYER_APNS_SANDBOX_URL") ?? settings.apnsSandboxURL)
        settings.fcmURL = trimmed(reader.optional("LAYER_FCM_URL") ?? settings.fcmURL)
        settings.fcmTokenURL = reader.optional("LAYER_FCM_TOKEN_URL") ?? settings.fcmTokenURL
        settings.caFile = reader.optional("LAYER_PUSH_CA_FILE")
        settings.timeout = .milliseconds(reader.integer("LAYER_PUSH_TIMEOUT_MS", default: 10_000, in: 100...120_000))
        return settings
    }

    private static func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
}

extension HTTPClient {
    private static let pushClients = Mutex<[String: HTTPClient]>([:])

    /// The client that speaks to APNs and FCM: HTTP/2 over TLS (chosen by ALPN), one connection
    /// per host multiplexing every push, trusting the system's roots and those of `caFile`. One
    /// per process and file, for the life of the process.
    static func push(caFile: String?) throws -> HTTPClient {
        let key = caFile ?? ""
        if let client = pushClients.withLock({ $0[key] }) { return client }
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            tls.additionalTrustRoots = [.certificates(certificates)]
        }
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
        configuration.httpVersion = .automatic
        configuration.timeout.connect = .seconds(5)
        let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return pushClients.withLock { clients in
            if let existing = clients[key] {
                try? made.syncShutdown()
                return existing
            }
            clients[key] = made
            return made
        }
    }
}

/// What became of one push.
enum PushOutcome: Sendable, Equatable, Error {
    case sent
    /// The token is no longer valid (APNs 410 `Unregistered`, FCM `UNREGISTERED`): remove it.
    case tokenGone(status: Int, reason: String)
    /// The service is busy or failed (429, 5xx, no answer): try again, after `retryAfter` if it said.
    case retry(status: Int?, reason: String, retryAfter: Duration?)
    /// The app's credentials are refused: mark the provider failing, stop sending with them.
    case credentialsRefused(status: Int?, reason: String)
    /// This push was refused for what it is (too large, a bad topic): not retried.
    case rejected(status: Int, reason: String)
}

/// One push, rendered for its service, ready to send (and to keep for a retry).
struct RenderedPush: Sendable, Codable, Equatable {
    var provider: PushProvider
    var token: String
    /// APNs: the `apns-*` headers of the request.
    var headers: [String: String]
    /// The JSON body.
    var body: String
}

/// A push service's answer that is not a 200.
struct PushRefusal: Sendable {
    var status: Int
    var body: ByteBuffer
    /// The `Retry-After` of the answer.
    var retryAfter: Duration?
}

extension HTTPClient {
    /// Sends one request to a push service: nil when it answered 200, its refusal otherwise; throws
    /// when it did not answer within `timeout`.
    func pushRequest(_ request: HTTPClientRequest, timeout: Duration) async throws -> PushRefusal? {
        let response = try await execute(request, timeout: .init(timeout))
        let body = try await response.body.collect(upTo: 64 * 1024)
        let status = Int(response.status.code)
        guard status != 200 else { return nil }
        return PushRefusal(status: status, body: body, retryAfter: response.retryAfter)
    }
}

extension HTTPClientResponse {
    /// The `Retry-After` of the answer, in seconds.
    var retryAfter: Duration? {
        headers.first(name: "retry-after").flatMap(Int.init).map { .seconds(max(0, min($0, 3600))) }
    }
}
