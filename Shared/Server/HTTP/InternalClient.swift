import AsyncHTTPClient
import Foundation
import LayerModels
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// JSON over HTTP to another service's `/internal/v1/…` routes: authenticated with the internal
/// token, bounded by a deadline, carrying the request id, and retrying idempotent calls with
/// exponential backoff when the other side is unreachable or answers 502/503/504.
public struct InternalClient: Sendable {
    /// Read at every call, so a client can be made before the address it calls is known (as in
    /// `layer dev --port 0`, where the services call their own listener).
    let baseURL: @Sendable () -> String
    let token: String
    let http: HTTPClient
    let timeout: Duration
    let attempts: Int

    public init(baseURL: String, token: String, http: HTTPClient, timeout: Duration = .seconds(5), attempts: Int = 3) {
        let trimmed = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.init(baseURL: { trimmed }, token: token, http: http, timeout: timeout, attempts: attempts)
    }

    public init(
        baseURL: @escaping @Sendable () -> String, token: String, http: HTTPClient, timeout: Duration = .seconds(5),
        attempts: Int = 3
    ) {
        self.baseURL = baseURL
        self.token = token
        self.http = http
        self.timeout = timeout
        self.attempts = attempts
    }

    public func post<Body: Encodable, Answer: Decodable>(
        _ path: String, body: Body, as: Answer.Type, idempotent: Bool, logger: Logger
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL() + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: MediaType.json)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let requestID = logger[metadataKey: "request_id"] {
            request.headers.add(name: LayerHeader.requestID, value: "\(requestID)")
        }
        request.body = .bytes(ByteBuffer(data: try StreamingJSONEncoder.data(body)))

        var delay = Duration.milliseconds(50)
        for attempt in 1...max(1, idempotent ? attempts : 1) {
            do {
                let response = try await http.execute(request, timeout: .init(timeout))
                let bytes = try await response.body.collect(upTo: 4 * 1024 * 1024)
                let status = Int(response.status.code)
                if (200..<300).contains(status) {
                    return try LayerJSONDecoder.make().decode(Answer.self, from: bytes)
                }
                let retryable = [502, 503, 504].contains(status) && idempotent && attempt < attempts
                if !retryable {
                    if let error = try? LayerJSONDecoder.make().decode(ErrorBody.self, from: bytes),
                        let id = ErrorID(rawValue: error.id), id.status < 500
                    {
                        throw APIError(id, error.message, data: error.data)
                    }
                    logger.error("Internal call failed", metadata: ["path": "\(path)", "status": "\(status)"])
                    throw APIError(.serviceUnavailable, "A service this request depends on failed.")
                }
            } catch let error as APIError {
                throw error
            } catch {
                logger.warning(
                    "Internal call error", metadata: ["path": "\(path)", "attempt": "\(attempt)", "error": "\(error)"])
                if !idempotent || attempt >= attempts {
                    throw APIError(.serviceUnavailable, "A service this request depends on is unavailable.")
                }
            }
            try await Task.sleep(for: delay)
            delay *= 2
        }
        throw APIError(.serviceUnavailable, "A service this request depends on is unavailable.")
    }
}

/// An address learnt after start-up, such as the suite's own listener in `layer dev --port 0`,
/// where the services call each other on the port they were given.
public final class LateBoundURL: Sendable {
    private let value: Mutex<String>

    public init(_ initial: String = "") {
        value = Mutex(initial)
    }

    public func set(_ url: String) { value.withLock { $0 = url } }
    public func get() -> String { value.withLock { $0 } }
}

/// Described without its token: the values that hold a client end up in logs (ServiceLifecycle
/// logs the services it starts).
extension InternalClient: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "InternalClient(\(baseURL()))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension HTTPClient {
    /// A client that gives up on a refused connection at once, rather than trying to connect again
    /// until the call's deadline: for calls that are made again later anyway and must not hold up
    /// the request that makes them (the auth service's reports of sign-ins to the sync service).
    public static let failingFast: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}

extension InternalClient {
    /// A readiness check of the auth service behind this client: it answers a token check (any
    /// answer, a refusal included, means it is up and reaches its database).
    public var authReadinessCheck: OperationalRoutes.Check {
        { [self] in
            let answer = try? await post(
                InternalAPI.appTokensPath, body: InternalAPI.AppTokenRequest(appID: UUID(), token: "readiness-probe"),
                as: InternalAPI.AppTokenResponse.self, idempotent: false, logger: Logger(label: "layer.readiness"))
            return answer != nil
        }
    }
}
