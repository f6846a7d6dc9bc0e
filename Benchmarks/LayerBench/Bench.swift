import ArgumentParser
import AsyncHTTPClient
import Foundation
import LayerAuth
import LayerDevelopment
import LayerModels
import LayerNames
import LayerServer
import LayerSuite
import LayerSync
import LayerVoIP
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import _CryptoExtras

/// `layer-bench`: load figures for BENCHMARKS.md. Starts a private PostgreSQL and the auth service
/// in this process (like `layer dev`), then drives it over loopback HTTP with concurrent clients.
///
///     swift run -c release layer-bench [--clients 8] [--sessions 4000] [--seconds 5]
///     swift run -c release layer-bench sync [--clients 16] [--seconds 5]
///     swift run -c release layer-bench sync --first-sync 1500
///     swift run -c release layer-bench push [--sockets 500] [--seconds 10] [--rates 200,1000] [--idle-sockets 2000]
///     swift run -c release layer-bench push --rates none --idle-sockets 20000
///     swift run -c release layer-bench push --histories 100,10000,100000
///     swift run -c release layer-bench names [--records 10000,100000] [--clients 16] [--seconds 5]
///     swift run -c release layer-bench stun [--in-flight 32] [--seconds 5]
///
/// With `sync`, the sync service runs beside the auth service (as in `layer dev`) and the sync
/// figures are measured instead; with `push`, the WebSocket latency and memory (PushBench.swift);
/// with `stun`, the STUN server against coturn's, without PostgreSQL (STUNBench.swift).
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layer-bench",
        abstract: "Load figures for BENCHMARKS.md, against a private PostgreSQL and the services in this process.")

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case auth, sync, push, names, voip, stun
    }

    @Argument(help: "What to measure.")
    var mode: Mode = .auth

    @OptionGroup var flags: Options.Flags

    func run() async throws {
        let mode = self.mode.rawValue
        var options = Options(flags)
        raiseOpenFileLimit(to: 65536)
        if mode == "stun" {
            try await STUNBench(seconds: options.seconds, inFlight: options.inFlight).run()
            return
        }
        if mode == "push" {
            // Open-loop sends need more connections than the closed-loop figures, and longer steps.
            if flags.clients == nil { options.clients = 32 }
            if flags.seconds == nil { options.seconds = 10 }
        }
        if mode == "voip", flags.rates == nil { options.rates = [100] }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-bench-\(getpid())")
        let embedded = try EmbeddedPostgres.start(directory: directory, logger: logger)
        // Gone with the benchmark however it ends, killed mid-run included.
        try embedded.stopAndRemoveAfterExit(of: getpid())
        defer { embedded.stopAndRemove() }
        var database = embedded.settings
        database.maxConnections = options.connections
        let operatorToken = Secrets.randomToken()
        var server = ServerSettings()
        server.port = 0
        server.database = database
        // Rate limits out of the way.
        let unlimited = RateLimiter.Limit(rate: 1e9, burst: 3e9)
        server.rateLimits = RateLimits(nonces: unlimited, sessions: unlimited, certificates: unlimited)
        let postgres = database.makeClient(logger: logger)
        // The suite from its catalogue, as `layer dev` makes it.
        var reader = SettingsReader([
            "LAYER_OPERATOR_TOKEN": operatorToken, "LAYER_CA_KEY_SECRET": "bench", "LAYER_CONTENT_LINK_SECRET": "bench",
            "LAYER_RATE_LIMIT_NAMES_RESOLVE": "1e9", "LAYER_RATE_LIMIT_NAMES_WRITES": "1e9",
        ])
        let services = Suite.configured(from: &reader).filter { service in
            switch mode {
            case "auth": service.name == AuthService.name
            case "names": service.name != SyncService.name && service.name != VoIPService.name
            case "voip": service.name != NamesService.name
            // `--without-names`: sync without the relationship reports, to see what they cost.
            default: service.name != VoIPService.name && (service.name != NamesService.name || !options.withoutNames)
            }
        }
        try reader.validate("layer-bench")
        // The services' own client, so that their calls to each other never queue behind the load.
        let internalHTTP = HTTPClient(eventLoopGroupProvider: .singleton)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            services, settings: server, postgres: postgres,
            http: internalHTTP, onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(configuration: .layer(app, settings: server, signals: [], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next()!
            var configuration = HTTPClient.Configuration()
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(8, options.clients)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            let runner = Runner(
                base: "http://127.0.0.1:\(port)", operatorToken: operatorToken,
                internalToken: server.internalTokens.token(of: SyncService.name),
                options: options, http: http)
            if mode == "push" {
                let (app, signer) = try await runner.registerApp()
                let sync = SyncRunner(runner: runner, postgres: postgres, signer: signer, app: app)
                try await PushRunner(
                    sync: sync, base: runner.base, database: database, internalTokens: server.internalTokens, logger: logger
                ).run()
            } else if mode == "voip" {
                let (app, signer) = try await runner.registerApp()
                let sync = SyncRunner(runner: runner, postgres: postgres, signer: signer, app: app)
                try await VoIPRunner(sync: sync, base: runner.base, logger: logger).run()
            } else if mode == "names" {
                try await NamesRunner(runner: runner, postgres: postgres, sizes: options.records).run()
                try await idleMemory(of: "layer-names", database: database, authURL: "http://127.0.0.1:\(port)", logger: logger)
            } else if mode == "sync" {
                let (app, signer) = try await runner.registerApp()
                try await SyncRunner(runner: runner, postgres: postgres, signer: signer, app: app).run()
                if options.firstSync == nil {
                    try await idleMemory(
                        of: "layer-sync", database: database, authURL: "http://127.0.0.1:\(port)", logger: logger)
                }
            } else {
                try await runner.run()
                try await idleMemory(of: "layer-auth", database: database, authURL: "", logger: logger)
            }
            try await http.shutdown()
            try await internalHTTP.shutdown()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}

struct Options {
    var clients = 8
    var sessions = 4000
    var seconds = 5.0
    var connections = 20
    /// `push`: WebSockets of the latency steps, send rates per second, idle WebSockets for memory.
    var sockets = 500
    var rates = [200, 1000]
    var idleSockets = 2000
    /// `push --histories 100,10000`: instead, the latency into conversations of that many messages.
    var histories: [Int] = []
    /// `sync --first-sync 1500`: only the first sync of a user in that many conversations.
    var firstSync: Int?
    /// `sync --receipts`: only the receipts switch, on and off.
    var receipts = false
    /// `sync --search 1000000`: only search, of a user in 1,500 conversations among that many messages.
    var search: Int?
    /// `names`: the sizes of the stores imported; `sync`: leave the names service out.
    var records = [10_000, 100_000]
    var withoutNames = false
    /// `stun`: requests the client keeps outstanding.
    var inFlight = 32

    /// The command line's options; those left out keep the defaults above (or the mode's own).
    struct Flags: ParsableArguments {
        @Option(help: "Concurrent clients.") var clients: Int?
        @Option(help: "auth: sessions opened.") var sessions: Int?
        @Option(help: "Seconds of each step.") var seconds: Double?
        @Option(help: "PostgreSQL pool connections.") var connections: Int?
        @Option(help: "push: WebSockets of the latency steps.") var sockets: Int?
        @Option(help: "push, voip: send rates per second, comma-separated; `none` for none.") var rates: String?
        @Option(help: "push: idle WebSockets for the memory figure.") var idleSockets: Int?
        @Option(help: "push: instead, latency into conversations of these many messages, comma-separated.")
        var histories: String?
        @Option(help: "sync: only the first sync of a user in this many conversations.") var firstSync: Int?
        @Flag(help: "sync: only messages read by 24 others, with the conversation's receipts on and off.") var receipts = false
        @Option(help: "sync: only search, of a user in 1,500 conversations among this many messages.") var search: Int?
        @Option(help: "names: sizes of the stores imported, comma-separated.") var records: String?
        @Flag(help: "sync: leave the names service out.") var withoutNames = false
        @Option(help: "stun: requests kept outstanding.") var inFlight: Int?
    }

    init(_ flags: Flags) {
        func numbers(_ text: String) -> [Int] { text.split(separator: ",").compactMap { Int($0) } }
        clients = flags.clients ?? clients
        sessions = flags.sessions ?? sessions
        seconds = flags.seconds ?? seconds
        connections = flags.connections ?? connections
        sockets = flags.sockets ?? sockets
        rates = flags.rates.map(numbers) ?? rates
        idleSockets = flags.idleSockets ?? idleSockets
        histories = flags.histories.map(numbers) ?? histories
        firstSync = flags.firstSync
        receipts = flags.receipts
        search = flags.search
        records = flags.records.map(numbers) ?? records
        withoutNames = flags.withoutNames
        inFlight = flags.inFlight ?? inFlight
    }
}

struct Runner {
    let base: String
    let operatorToken: String
    /// A token the introspection route accepts (the sync service's).
    let internalToken: String
    let options: Options
    /// Keeps a connection per client.
    let http: HTTPClient

    func run() async throws {
        let (app, signer) = try await registerApp()
        print("clients: \(options.clients), PostgreSQL pool: \(options.connections) connections")

        // 1. Nonces, then sessions (tokens are signed between the two timed phases: signing is the
        //    app backend's work, and RSA signing here would take the CPU the server needs).
        let count = options.sessions
        var cpu = CPUTime()
        let (nonces, nonceSeconds) = try await timed(count) { _ in
            try await call(.POST, "/nonces").json?["nonce"]?.stringValue ?? ""
        }
        let nonceCPU = cpu.lap()
        let tokens = try nonces.map { try signer.token(userID: "user-\(Int.random(in: 0..<1000))", nonce: $0) }
        _ = cpu.lap()
        let (sessions, sessionSeconds) = try await timed(count) { index in
            try await call(
                .POST, "/sessions", json: ["identity_token": .string(tokens[index]), "app_id": .string(app)]
            ).json?["session_token"]?.stringValue ?? ""
        }
        let sessionCPU = cpu.lap()
        let opened = sessions.filter { !$0.isEmpty }.count
        report("POST /nonces", count, nonceSeconds, cpu: nonceCPU)
        report("POST /sessions", opened, sessionSeconds, cpu: sessionCPU)
        report("nonce + session pairs", opened, nonceSeconds + sessionSeconds)

        // 2. Introspection over the internal API: every call reads PostgreSQL (a cache miss).
        let live = Array(sessions.filter { !$0.isEmpty }.prefix(500))
        _ = cpu.lap()
        let misses = try await forDuration { index in
            _ = try await call(
                .POST, "/internal/v1/introspect", json: ["token": .string(live[index % live.count])],
                bearer: internalToken)
        }
        report("introspect, cache miss (HTTP + PostgreSQL)", misses.count, misses.seconds, cpu: cpu.lap())

        // 3. Authenticated requests to the auth service (its middleware introspects locally).
        let authenticated = try await forDuration { index in
            _ = try await call(.GET, "/sessions/current", session: live[index % live.count])
        }
        report("GET /sessions/current (authenticated)", authenticated.count, authenticated.seconds, cpu: cpu.lap())

        // 4. The other services' cache: what a cache hit costs inside a service.
        let cache = CachingIntrospector(
            HTTPSessionIntrospector(client: InternalClient(baseURL: base, token: internalToken, http: http)),
            ttl: .seconds(60))
        let logger = Logger(label: "bench")
        for token in live { _ = try await cache.introspect(token: token, logger: logger) }
        let hits = try await forDuration { index in
            _ = try await cache.introspect(token: live[index % live.count], logger: logger)
        }
        report("introspect, cache hit (in process)", hits.count, hits.seconds)
        print("resident memory of this process (server, PostgreSQL client and load generator): \(residentMB()) MB")
    }

    // MARK: Load

    func timed<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) async throws -> T) async throws -> ([T], Double) {
        let start = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: [(Int, T)].self) { group in
            for client in 0..<options.clients {
                group.addTask {
                    var done: [(Int, T)] = []
                    for index in stride(from: client, to: count, by: options.clients) {
                        done.append((index, try await work(index)))
                    }
                    return done
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return (results, seconds(since: start))
    }

    func forDuration(_ work: @escaping @Sendable (Int) async throws -> Void) async throws -> (count: Int, seconds: Double) {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(options.seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<options.clients {
                group.addTask {
                    var index = client
                    var done = 0
                    while ContinuousClock.now < deadline {
                        try await work(index)
                        index += options.clients
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        return (total, seconds(since: start))
    }

    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    func report(_ what: String, _ count: Int, _ seconds: Double, cpu: CPUTime.Split? = nil) {
        var line =
            "\(what): \(count) in \(String(format: "%.2f", seconds)) s = \(String(format: "%.0f", Double(count) / seconds))/s"
        if let cpu {
            line += String(
                format: " (CPU per request: this process %.0f µs, PostgreSQL %.0f µs)",
                cpu.process / Double(count) * 1e6, cpu.postgres / Double(count) * 1e6)
        }
        print(line)
    }

    // MARK: HTTP

    struct Answer {
        var status: UInt
        var json: JSONValue?
    }

    func call(
        _ method: HTTPMethod, _ path: String, json: JSONValue? = nil, bearer: String? = nil, session: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Accept", value: MediaType.layerJSON)
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        if let session { request.headers.add(name: "Authorization", value: "Layer session-token=\"\(session)\"") }
        if let json {
            request.headers.add(name: "Content-Type", value: MediaType.json)
            request.body = .bytes(ByteBuffer(data: try StreamingJSONEncoder.data(json)))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Answer(status: response.status.code, json: try? LayerJSONDecoder.make().decode(JSONValue.self, from: body))
    }

    func registerApp() async throws -> (String, IdentityTokenSigner) {
        let app =
            try await call(.POST, "/admin/apps", json: ["name": "bench"], bearer: operatorToken).json?["id"]?.stringValue ?? ""
        let appPath = "/admin/apps/\(app.split(separator: "/").last!)"
        let provider =
            try await call(.POST, appPath + "/providers", json: [:], bearer: operatorToken).json?["id"]?.stringValue ?? ""
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let kid =
            try await call(
                .POST, appPath + "/providers/\(provider.split(separator: "/").last!)/keys",
                json: ["public_key": .string(key.publicKey.pemRepresentation)], bearer: operatorToken
            ).json?["id"]?.stringValue ?? ""
        return (app, IdentityTokenSigner(privateKey: key, keyID: kid, providerID: provider))
    }

    func residentMB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}
