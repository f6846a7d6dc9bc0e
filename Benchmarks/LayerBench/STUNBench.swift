import Foundation
import LayerDevelopment
import LayerServer
import LayerVoIP
import Logging
import NIOPosix
import STUNCodec
import ServiceLifecycle

/// `layer-bench stun`: Binding responses per second of our STUN server and of coturn's
/// (`turnserver --stun-only`), one after the other, measured by the same pipelined client: one
/// UDP socket keeping `--in-flight` requests outstanding, each with its own transaction id, for
/// `--seconds` after a second of warm-up. Our server runs in this process on an event loop of its
/// own; coturn in its own process. The client runs on this process's main task.
struct STUNBench {
    let seconds: Double
    let inFlight: Int

    func run() async throws {
        var logger = Logger(label: "bench.stun")
        logger.logLevel = .warning
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        // One client measures throughput: no allowance per source address.
        let server = STUNServer(
            host: "127.0.0.1", port: 0, sourceLimit: nil, group: group, logger: logger, onBound: { bound.yield($0) })
        let services = ServiceGroup(services: [server], logger: logger)
        print("STUN Binding requests, \(inFlight) in flight on one socket, \(seconds) s per server")
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw BenchError("the STUN server did not start") }
            report(
                "Layerline STUNServer",
                try measure(port: port, serverCPU: { CPUTime.seconds(of: "self") - BenchUDPSocket.threadCPU() }))
            await services.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        try await group.shutdownGracefully()
        try measureCoturn()
    }

    /// Starts coturn on a free loopback port, measures it, and stops it.
    func measureCoturn() throws {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/turnserver" }
        guard let turnserver = path.first(where: FileManager.default.isExecutableFile(atPath:)) else {
            print("coturn: turnserver is not installed (bash scripts/ensure-deps.sh installs it)")
            return
        }
        let port = try BenchUDPSocket.freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-bench-coturn-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let arguments = [
            "-n", "--listening-ip=127.0.0.1", "--listening-port=\(port)", "--stun-only", "--no-cli", "--no-tls",
            "--no-dtls", "--log-file=stdout", "--simple-log", "--pidfile=\(directory.path)/turnserver.pid",
        ]
        let log = directory.appendingPathComponent("log")
        let pid = try Subprocess.spawn(turnserver, arguments, outputPath: log.path)
        defer {
            kill(pid, SIGTERM)
            _ = Subprocess.exitStatus(of: pid, block: true)
        }
        let result = try measure(port: port, serverCPU: { CPUTime.seconds(of: "\(pid)") })
        let version = (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n").first { $0.hasPrefix("Version") }
        report("\(version ?? "coturn") (turnserver --stun-only)", result)
    }

    struct Result {
        var responses: Int
        var seconds: Double
        var lost: Int
        var serverCPU: Double
    }

    func report(_ server: String, _ result: Result) {
        print(
            String(
                format: "%@: %d responses in %.2f s = %.0f/s (%d lost to timeouts; server CPU %.2f µs per response)",
                server, result.responses, result.seconds, Double(result.responses) / result.seconds, result.lost,
                result.serverCPU / Double(max(1, result.responses)) * 1e6))
    }

    /// Checks one answer with the codec, warms up, then counts answers for `seconds`, reading the
    /// server's CPU seconds with `serverCPU` before and after (called on the client's thread, so
    /// that our server, which runs in this process, can leave the client's time out).
    func measure(port: Int, serverCPU: () -> Double) throws -> Result {
        let socket = try BenchUDPSocket(port: port)
        try check(socket)
        _ = try pump(socket, for: 1)
        let cpuBefore = serverCPU()
        var result = try pump(socket, for: seconds)
        result.serverCPU = serverCPU() - cpuBefore
        return result
    }

    /// One request decoded in full: the server answers with this socket's address, or the figures
    /// would measure the wrong thing.
    func check(_ socket: BenchUDPSocket) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        let request = STUNMessage(.request, .binding)
        while ContinuousClock.now < deadline {
            try socket.send(request.encoded(fingerprint: false))
            guard let bytes = socket.receive() else { continue }
            let answer = try STUNMessage(decoding: bytes)
            let expected = STUNAddress(.ipv4(0x7F00_0001), port: UInt16(socket.localPort))
            guard try answer.xorMappedAddress == expected, answer.transactionID == request.transactionID else {
                throw BenchError("unexpected answer \(answer)")
            }
            return
        }
        throw BenchError("no answer from port \(socket.remotePort)")
    }

    /// Keeps `inFlight` requests outstanding: one new request for every answer, and a new window
    /// after a timeout (UDP may drop under load). Transaction ids carry a counter, so that an
    /// answer is matched without decoding it.
    func pump(_ socket: BenchUDPSocket, for seconds: Double) throws -> Result {
        var request = STUNMessage(.request, .binding).encoded(fingerprint: false)
        var next: UInt64 = 0
        var outstanding = Set<UInt64>()
        var responses = 0
        var lost = 0
        func send() throws {
            withUnsafeBytes(of: next.bigEndian) { request.replaceSubrange(8..<16, with: $0) }
            outstanding.insert(next)
            next += 1
            try socket.send(request)
        }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var buffer = [UInt8](repeating: 0, count: 2048)
        while ContinuousClock.now < deadline {
            while outstanding.count < inFlight { try send() }
            guard let count = socket.receive(into: &buffer) else {
                lost += outstanding.count
                outstanding.removeAll()
                continue
            }
            let id = buffer[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard count >= 20, buffer[0] == 0x01, buffer[1] == 0x01, outstanding.remove(id) != nil else { continue }
            responses += 1
        }
        let elapsed = ContinuousClock.now - start
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Result(responses: responses, seconds: elapsedSeconds, lost: lost, serverCPU: 0)
    }
}
