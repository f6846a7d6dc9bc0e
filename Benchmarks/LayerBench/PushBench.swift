import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdWSClient
import LayerDevelopment
import LayerServer
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// `layer-bench push`: how long a sent message takes to reach the other participant's WebSocket
/// at fixed send rates, and what an idle WebSocket costs a separate `layer-sync` process.
struct PushRunner {
    let sync: SyncRunner
    /// Where the in-process auth and sync services listen.
    let base: String
    let database: DatabaseSettings
    let internalTokens: InternalTokens
    let logger: Logger

    var runner: Runner { sync.runner }
    var options: Options { runner.options }

    func run() async throws {
        if !options.histories.isEmpty { return try await historyLatency() }
        // `--rates none`: only the memory of idle sockets.
        if options.rates.isEmpty { return try await idleSocketMemory(count: options.idleSockets) }
        // 1. Pairs of users (2p, 2p + 1), one conversation and one WebSocket each.
        let pairs = max(1, options.sockets / 2)
        let sessions = try await sessions(pairs * 2, prefix: "push")
        let (conversations, _) = try await runner.timed(pairs) { pair in
            try await sync.create(session: sessions[2 * pair], members: ["push-\(2 * pair + 1)"])
        }
        let deliveries = Deliveries()
        let sockets = try await BenchSocket.open(
            sessions.map { webSocketURL(base, $0) }, logger: logger
        ) { socket, text in deliveries.received(text, on: socket) }
        print("push: \(pairs) two-person conversations, \(sockets.count) WebSockets connected")
        // Presence packets of the new connections settle before anything is timed.
        try await Task.sleep(for: .seconds(2))

        // 2. Each rate for `seconds`, open loop: a send is fired when it is due, not when the
        //    previous one has answered, so a slow server shows as latency, not as a lower rate.
        var rows: [String] = []
        for rate in options.rates {
            deliveries.reset()
            var cpu = CPUTime()
            let machine = machineBusySeconds()
            let total = Int(Double(rate) * options.seconds)
            let interval = Duration.seconds(1) / rate
            let start = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    let due = start + interval * index
                    if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                    group.addTask {
                        // Spread over the pairs; the direction alternates within a pair.
                        let pair = index % pairs
                        let from = 2 * pair + (index / pairs) % 2
                        do {
                            let id = try await sync.send(
                                session: sessions[from], conversation: conversations[pair], text: "p\(index)")
                            deliveries.sent(id, to: from ^ 1, at: ContinuousClock.now)
                        } catch {
                            deliveries.failed(error)
                        }
                    }
                }
            }
            // Drain: wait up to 5 s for the last packets.
            let drainEnd = ContinuousClock.now + .seconds(5)
            while !deliveries.complete, ContinuousClock.now < drainEnd { try await Task.sleep(for: .milliseconds(100)) }
            let split = cpu.lap()
            // Whatever else ran on the machine meanwhile (a build, tests) took CPU from the services.
            let others = machineBusySeconds() - machine - split.process - split.postgres
            rows.append(deliveries.row(rate: rate, start: start, cpu: split) + String(format: " | %.1f s", others))
        }
        print(
            "\nrate/s | sent (201) | delivered | failed | achieved/s | p50 ms | p99 ms | max ms | min ms | < 0 | CPU µs/msg: process / PostgreSQL | other processes' CPU"
        )
        for row in rows { print(row) }
        await BenchSocket.close(sockets)

        // 3. Memory per idle WebSocket in a `layer-sync` process of its own.
        try await idleSocketMemory(count: options.idleSockets)
    }

    /// Send→push latency into a two-person conversation that already holds `size` messages, for
    /// each size: the cost of a change must not grow with the history. 200 messages, one every
    /// 20 ms, each timed from its 201 to the other member's socket.
    func historyLatency() async throws {
        print("history (messages) | sent | delivered | p50 ms | p99 ms | max ms | filled in")
        for (index, size) in options.histories.enumerated() {
            let sessions = try await sessions(2, prefix: "history\(index)")
            let conversation = try await sync.create(session: sessions[0], members: ["history\(index)-1"])
            let started = ContinuousClock.now
            try await sync.fill(conversation, messages: size, session: sessions[0])
            let filled = ContinuousClock.now - started
            let deliveries = Deliveries()
            let sockets = try await BenchSocket.open([webSocketURL(base, sessions[1])], logger: logger) { socket, text in
                deliveries.received(text, on: socket)
            }
            try await Task.sleep(for: .seconds(1))
            for message in 0..<200 {
                do {
                    let id = try await sync.send(session: sessions[0], conversation: conversation, text: "h\(message)")
                    deliveries.sent(id, to: 0, at: ContinuousClock.now)
                } catch {
                    deliveries.failed(error)
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let drainEnd = ContinuousClock.now + .seconds(5)
            while !deliveries.complete, ContinuousClock.now < drainEnd { try await Task.sleep(for: .milliseconds(50)) }
            print("\(size) | " + deliveries.latencySummary() + String(format: " | %.1f s", milliseconds(filled) / 1000))
            await BenchSocket.close(sockets)
        }
    }

    func sessions(_ count: Int, prefix: String) async throws -> [String] {
        let (sessions, _) = try await runner.timed(count) { try await sync.session(user: "\(prefix)-\($0)") }
        guard !sessions.contains("") else { throw BenchError("a session could not be created") }
        return sessions
    }

    func webSocketURL(_ base: String, _ session: String) -> String {
        base.replacingOccurrences(of: "http://", with: "ws://") + "/websocket?session_token=\(session)"
    }

    /// Starts `layer-sync` beside this binary (checking sessions with the in-process auth service,
    /// on the same database), then compares its resident memory before and after `count` sockets.
    func idleSocketMemory(count: Int) async throws {
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let binary = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("layer-sync").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            print("idle WebSockets: build layer-sync first (swift build -c release --product layer-sync)")
            return
        }
        let port = try await freePort()
        let environment = [
            "LAYER_DATABASE_URL": database.url, "LAYER_OPERATOR_TOKEN": "bench", "LAYER_CONTENT_LINK_SECRET": "bench",
            "LAYER_CA_KEY_SECRET": "bench", "LAYER_PORT": "\(port)", "LAYER_HOST": "127.0.0.1", "LOG_LEVEL": "error",
            "LAYER_AUTH_URL": base,
        ].merging(internalTokens.environment) { $1 }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("layer-sync-\(getpid()).log").path
        let pid = try Subprocess.spawn(binary, [], environment: environment, outputPath: output)
        defer { stop(pid) }
        let childBase = "http://127.0.0.1:\(port)"
        do { try await waitUntilLive(childBase) } catch {
            throw BenchError(
                "\(error); exit status \(Subprocess.exitStatus(of: pid, block: false).map { "\($0)" } ?? "none (running)"), output in \(output)"
            )
        }
        let sessions = try await sessions(count, prefix: "idle")
        let urls = sessions.map { webSocketURL(childBase, $0) }
        // Warm-up: pools, caches and allocator arenas that the first connections create.
        await BenchSocket.close(try await BenchSocket.open(Array(urls.prefix(50)), logger: logger) { _, _ in })
        try await Task.sleep(for: .seconds(3))
        let before = memory(of: pid)
        let sockets = try await BenchSocket.open(urls, logger: logger) { _, _ in }
        try await Task.sleep(for: .seconds(5))
        let after = memory(of: pid)
        guard Subprocess.exitStatus(of: pid, block: false) == nil else { throw BenchError("layer-sync ended, see \(output)") }
        await BenchSocket.close(sockets)
        let perSocket = { (a: Int, b: Int) in String(format: "%.1f", Double(b - a) / Double(sockets.count)) }
        print(
            "\nidle WebSockets on layer-sync: \(sockets.count); resident \(before.rss) → \(after.rss) kB = \(perSocket(before.rss, after.rss)) kB each"
                + " (anonymous \(before.anonymous) → \(after.anonymous) kB = \(perSocket(before.anonymous, after.anonymous)) kB each)"
        )
    }

    func memory(of pid: pid_t) -> (rss: Int, anonymous: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func kB(_ key: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key) } ?? ""
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
        }
        return (kB("VmRSS:"), kB("RssAnon:"))
    }

    /// A port that was free a moment ago (the child binds it; `LAYER_PORT=0` would hide it from us).
    /// The socket must be closed before the spawn: the child inherits every open descriptor, and
    /// with this one it would hold the port without ever accepting on it.
    func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    func waitUntilLive(_ base: String) async throws {
        for _ in 0..<150 {
            let response = try? await runner.http.execute(HTTPClientRequest(url: base + "/health/live"), timeout: .seconds(1))
            if response?.status == .ok { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BenchError("layer-sync did not answer on \(base) within 30 s")
    }

    /// SIGTERM, then SIGKILL if it has not ended after 10 s; always reaped.
    func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        for tenth in 0..<100 {
            if let status = Subprocess.exitStatus(of: pid, block: false) {
                return print("layer-sync ended \(Double(tenth) / 10) s after SIGTERM with status \(status)")
            }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        _ = Subprocess.exitStatus(of: pid, block: true)
        print("layer-sync had not ended 10 s after SIGTERM: killed")
    }

    /// CPU seconds the whole machine has been busy since boot (/proc/stat: user, nice, system, irq, softirq).
    func machineBusySeconds() -> Double {
        let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        let ticks = stat.split(separator: "\n").first?.split(separator: " ").dropFirst().compactMap { Double($0) } ?? []
        guard ticks.count >= 7 else { return 0 }
        return (ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// The 201s of one rate step and the `create Message` packets seen on every socket, shared by
/// the senders and the sockets' readers.
final class Deliveries: Sendable {
    struct Key: Hashable { var id: String, socket: Int }

    private struct State {
        var sent: [(key: Key, at: ContinuousClock.Instant)] = []
        var arrived: [Key: ContinuousClock.Instant] = [:]
        var failures: [String] = []
    }

    /// Only the fields the benchmark needs; the rest of a packet is skipped by the decoder.
    private struct Packet: Decodable {
        struct Object: Decodable { var type, id: String }
        struct Body: Decodable { var operation: String?, object: Object? }
        var type: String
        var body: Body?
    }

    private let state = Mutex(State())

    func reset() { state.withLock { $0 = State() } }
    func sent(_ id: String, to socket: Int, at time: ContinuousClock.Instant) {
        state.withLock { $0.sent.append((Key(id: id, socket: socket), time)) }
    }
    func failed(_ error: any Error) { state.withLock { $0.failures.append("\(error)") } }

    /// Called by a socket's reader for every text frame, as it arrives.
    func received(_ text: String, on socket: Int) {
        let time = ContinuousClock.now
        // Conversation and presence updates are most of the traffic; skip them before decoding.
        guard text.contains("\"operation\":\"create\""),
            let packet = try? JSONDecoder().decode(Packet.self, from: Data(text.utf8)),
            packet.type == "change", packet.body?.operation == "create", let object = packet.body?.object,
            object.type == "Message"
        else { return }
        state.withLock { $0.arrived[Key(id: object.id, socket: socket)] = time }
    }

    var complete: Bool { state.withLock { s in s.sent.allSatisfy { s.arrived[$0.key] != nil } } }

    /// The `p` quantile of sorted `latencies`, in milliseconds with one decimal.
    static func rank(_ p: Double, of latencies: [Double]) -> String {
        latencies.isEmpty
            ? "-" : String(format: "%.1f", latencies[max(0, Int((p * Double(latencies.count)).rounded(.up)) - 1)])
    }

    /// `sent | delivered | p50 | p99 | max` in milliseconds, push arrival minus 201.
    func latencySummary() -> String {
        state.withLock { s in
            let latencies = s.sent.compactMap { sent in s.arrived[sent.key].map { milliseconds($0 - sent.at) } }.sorted()
            func rank(_ p: Double) -> String { Self.rank(p, of: latencies) }
            return "\(s.sent.count) | \(latencies.count) | \(rank(0.5)) | \(rank(0.99)) | \(rank(1))"
        }
    }

    /// One line of the table: latency is the push's arrival minus the 201's, per message.
    func row(rate: Int, start: ContinuousClock.Instant, cpu: CPUTime.Split) -> String {
        state.withLock { s in
            let latencies = s.sent.compactMap { sent in s.arrived[sent.key].map { milliseconds($0 - sent.at) } }.sorted()
            let last = s.sent.map(\.at).max() ?? start
            func rank(_ p: Double) -> String { Self.rank(p, of: latencies) }
            for failure in Set(s.failures).prefix(3) { print("send failed: \(failure)") }
            return "\(rate) | \(s.sent.count) | \(latencies.count) | \(s.failures.count) | "
                + String(format: "%.0f", Double(s.sent.count) / milliseconds(last - start) * 1000)
                + " | \(rank(0.5)) | \(rank(0.99)) | \(rank(1)) | " + (latencies.first.map { String(format: "%.1f", $0) } ?? "-")
                + " | \(latencies.filter { $0 < 0 }.count) | "
                + String(
                    format: "%.0f / %.0f", cpu.process / Double(s.sent.count) * 1e6, cpu.postgres / Double(s.sent.count) * 1e6)
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// A WebSocket with the `layer-3.0` subprotocol, read in the background until closed.
final class BenchSocket: Sendable {
    private let writer: WebSocketOutboundWriter
    private let task: Task<Void, Never>

    private init(writer: WebSocketOutboundWriter, task: Task<Void, Never>) {
        self.writer = writer
        self.task = task
    }

    /// Opens one socket per URL, 32 handshakes at a time; `onText` gets (index of the URL, frame).
    static func open(
        _ urls: [String], logger: Logger, onText: @escaping @Sendable (Int, String) -> Void
    ) async throws -> [BenchSocket] {
        try await withThrowingTaskGroup(of: (Int, BenchSocket).self) { group in
            var sockets: [BenchSocket?] = Array(repeating: nil, count: urls.count)
            for (index, url) in urls.enumerated() {
                if index >= 32, let done = try await group.next() { sockets[done.0] = done.1 }
                group.addTask { (index, try await open(url, logger: logger) { onText(index, $0) }) }
            }
            for try await (done, socket) in group { sockets[done] = socket }
            return sockets.compactMap { $0 }
        }
    }

    /// Returns once the upgrade succeeded; throws if it failed.
    static func open(_ url: String, logger: Logger, onText: @escaping @Sendable (String) -> Void) async throws -> BenchSocket {
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, additionalHeaders: [HTTPField.Name("Sec-WebSocket-Protocol")!: "layer-3.0"],
            closeTimeout: .seconds(5), autoPing: .disabled)
        // The handler hands its writer out through this stream; it ends with the error if the upgrade fails.
        let (started, continuation) = AsyncThrowingStream.makeStream(of: WebSocketOutboundWriter.self)
        let task = Task {
            do {
                try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) {
                    inbound, outbound, _ in
                    continuation.yield(outbound)
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        if case .text(let text) = message { onText(text) }
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        var iterator = started.makeAsyncIterator()
        guard let writer = try await iterator.next() else {
            task.cancel()
            throw BenchError("WebSocket \(url) ended before the upgrade")
        }
        return BenchSocket(writer: writer, task: task)
    }

    /// Closes all sockets concurrently and waits for their readers to end.
    static func close(_ sockets: [BenchSocket]) async {
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask {
                    try? await socket.writer.close(.normalClosure, reason: nil)
                    await socket.task.value
                }
            }
        }
    }
}
