import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTLS
import LayerModels
import LayerServer
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// A service (or several) served for real on a free loopback port, over the test database.
public struct LiveServer: Sendable {
    public let baseURL: String
    public let port: Int
    public let postgres: PostgresClient
    public let http: HTTPClient
    /// What it runs with, the database included: another server given these shares the database.
    public let settings: ServerSettings
    let plans: [ServicePlan]

    /// Instances of the services it serves, built apart from the running ones, to look at their
    /// routes and documents.
    public var services: [any LayerService] {
        get throws {
            try plans.map { try $0.build(ServiceDependencies(server: settings, postgres: postgres)) }
        }
    }

    /// Serves `services` (any of the suite's, configured as the test needs, or services made by
    /// hand) on one listener until `body` returns, then shuts down. Services hosted together call
    /// each other on that listener, as in `layer dev`; `http` is the client of their calls. The
    /// listener takes a free port, or `port` (from ``freePort()``) when another server must be told
    /// its address before it starts.
    public static func run<T: Sendable>(
        _ services: [ServicePlan],
        settings: ServerSettings? = nil,
        http: HTTPClient? = nil,
        port: Int = 0,
        logger: Logger = .test,
        _ body: @Sendable (LiveServer) async throws -> T
    ) async throws -> T {
        let database: DatabaseSettings
        if let shared = settings?.database { database = shared } else { database = try await TestDatabase.settings() }
        var serverSettings = settings ?? ServerSettings()
        serverSettings.host = "127.0.0.1"
        serverSettings.port = port
        // Tests run many servers at once on a loaded machine: unless a test chose its own
        // deadline (the fault tests do), a request gets a minute rather than the default 10 s.
        if serverSettings.requestTimeout == ServerSettings.defaultRequestTimeout {
            serverSettings.requestTimeout = .seconds(60)
        }
        if serverSettings.readinessTimeout == ServerSettings.defaultReadinessTimeout {
            serverSettings.readinessTimeout = .seconds(15)
        }
        serverSettings.database = database
        serverSettings.database?.statementTimeout = serverSettings.requestTimeout
        let postgres = serverSettings.database!.makeClient(logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            services, settings: serverSettings, postgres: postgres, http: http ?? serviceHTTPClient,
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(
            configuration: .layer(app, settings: serverSettings, signals: [], cancellationTimeout: nil, logger: logger))
        // Not a child task: a server that does not stop is left behind (see ``stop(_:running:)``)
        // rather than holding up the test, and the rest of the run, for ever.
        let running = Task {
            // A group that ends before it listens (its start failed) ends the wait for its port.
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await running.value
            throw CancellationError()
        }
        let scheme = serverSettings.tlsCertificatePath == nil ? "http" : "https"
        let server = LiveServer(
            baseURL: "\(scheme)://127.0.0.1:\(port)", port: port, postgres: postgres, http: HTTPClient.shared,
            settings: serverSettings, plans: services)
        let result: T
        do {
            result = try await body(server)
        } catch {
            try? await stop(group, running: running, logger: logger)
            throw error
        }
        try await stop(group, running: running, logger: logger)
        return result
    }

    /// Shuts the server down gracefully and waits for it to end. One that has not ended a minute
    /// later is left running, with a warning on standard error: a test that got this far
    /// passed, and waiting for ever would stop the whole run. (This happens after PostgreSQL
    /// restarts under load, where a PostgresNIO call can stay pending and ignore cancellation; a
    /// real process ends anyway, by the cancellation deadline of ``ServiceGroupConfiguration/layer``.)
    private static func stop(_ group: ServiceGroup, running: Task<Void, any Error>, logger: Logger) async throws {
        await group.triggerGracefulShutdown()
        let ended = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = Once(continuation)
            Task { @Sendable in
                _ = await running.result
                once.resume(true)
            }
            Task { @Sendable in
                try? await Task.sleep(for: .seconds(60))
                once.resume(false)
            }
        }
        if ended {
            try await running.value
        } else {
            FileHandle.standardError.write(Data("warning: a test server did not stop within a minute; left running\n".utf8))
        }
    }
}

/// A continuation resumed by the first of several callers.
private final class Once: Sendable {
    private let continuation: Mutex<CheckedContinuation<Bool, Never>?>
    init(_ continuation: CheckedContinuation<Bool, Never>) { self.continuation = Mutex(continuation) }
    func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
}

extension LiveServer {
    /// A loopback port free at the moment, for a server whose address another must know first.
    public static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }
}

extension Logger {
    /// Quiet unless `LOG_LEVEL` asks for more.
    public static var test: Logger {
        var logger = Logger(label: "test")
        logger.logLevel = Logger.Level(rawValue: ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "") ?? .critical
        return logger
    }
}

/// A response as a test looks at it.
public struct TestResponse: Sendable {
    public let status: Int
    public let headers: HTTPHeaders
    public let body: ByteBuffer

    public var json: JSONValue? { try? LayerJSONDecoder.make().decode(JSONValue.self, from: body) }
    public var text: String { String(buffer: body) }

    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try LayerJSONDecoder.make().decode(T.self, from: body)
    }

    /// The `id` of an error body.
    public var errorID: String? { json?["id"]?.stringValue }
    public var errorReason: String? { json?["data"]?["reason"]?.stringValue }
    public var errorProperty: String? { json?["data"]?["property"]?.stringValue }
}

/// Plain HTTP requests to a live server, with the API's default headers.
public struct TestClient: Sendable {
    public let baseURL: String
    public let http: HTTPClient
    public var defaultHeaders: [(String, String)] = [("Accept", MediaType.layerJSON)]

    public init(baseURL: String, http: HTTPClient = .shared) {
        self.baseURL = baseURL
        self.http = http
    }

    public func request(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: ByteBuffer? = nil,
        contentType: String = MediaType.json, accept: String? = MediaType.layerJSON
    ) async throws -> TestResponse {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let accept { request.headers.add(name: "Accept", value: accept) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(body)
        }
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        return try await send(request)
    }

    /// Sends a request made by hand, for what `request` does not cover (a streamed body, say).
    public func send(_ request: HTTPClientRequest, timeout: TimeAmount = .seconds(30)) async throws -> TestResponse {
        let response = try await http.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return TestResponse(status: Int(response.status.code), headers: response.headers, body: bytes)
    }

    public func request(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], json: JSONValue,
        contentType: String = MediaType.json, accept: String? = MediaType.layerJSON
    ) async throws -> TestResponse {
        let data = try StreamingJSONEncoder.data(json)
        return try await request(
            method, path, headers: headers, body: ByteBuffer(data: data), contentType: contentType, accept: accept)
    }
}

extension JSONValue {
    public var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    public var intValue: Int? {
        if case .number(let value) = self { return Int(exactly: value) }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The element at `index` of an array; nil for anything else or past its end.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let values) = self, values.indices.contains(index) else { return nil }
        return values[index]
    }
}

/// The uuid part of a `layer:///…/<uuid>` id.
public func bareUUID(_ id: String) -> String { String(id.split(separator: "/").last ?? "") }

extension HTTPClient {
    /// Runs `body` with a client that gives up on a refused connection at once, instead of
    /// retrying it until the deadline of each call (for services whose peer is nowhere).
    public static func withImpatientClient<T: Sendable>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        let impatient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let result = try await body(impatient)
            try await impatient.shutdown()
            return result
        } catch {
            try? await impatient.shutdown()
            throw error
        }
    }
}
