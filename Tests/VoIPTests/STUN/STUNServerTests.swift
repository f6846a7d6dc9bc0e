import LayerServer
import LayerVoIP
import Logging
import STUNCodec
import ServiceLifecycle
import Testing

/// The STUN server over real UDP on loopback, IPv4 and IPv6, started on a free port and shut
/// down by its service group.
@Suite struct STUNServerTests {
    static let quiet = {
        var logger = Logger(label: "test.stun")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs a STUN server on `host` and a free port for `body` (given the port), then shuts its
    /// service group down gracefully and waits for it to end.
    static func withServer(
        host: String = "127.0.0.1", sourceLimit: RateLimiter.Limit? = VoIPSettings().stunSourceLimit,
        logger: Logger = quiet, _ body: (Int) async throws -> Void
    ) async throws {
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let server = STUNServer(host: host, port: 0, sourceLimit: sourceLimit, logger: logger, onBound: { bound.yield($0) })
        let group = ServiceGroup(services: [server], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(port)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func answersIPv4Clients() async throws {
        try await Self.withServer { port in
            #expect(port > 0)
            let client = try UDPClient()
            let request = STUNMessage(.request, .binding)
            try client.send(request.encoded(), toPort: port)
            let answer = try STUNMessage(decoding: try #require(client.receive()))
            #expect(answer.messageClass == .successResponse)
            #expect(answer.transactionID == request.transactionID)
            #expect(try answer.xorMappedAddress == STUNAddress(.ipv4(0x7F00_0001), port: UInt16(client.port)))
        }
    }

    @Test func answersIPv6Clients() async throws {
        try await Self.withServer(host: "::1") { port in
            let client = try UDPClient(ipv6: true)
            try client.send(STUNMessage(.request, .binding).encoded(), toPort: port)
            let answer = try STUNMessage(decoding: try #require(client.receive()))
            #expect(try answer.xorMappedAddress == STUNAddress(.ipv6(1), port: UInt16(client.port)))
        }
    }

    /// On `::`, an IPv4 client is told its IPv4 address, not the mapped IPv6 form the socket sees.
    @Test func dualStackTellsIPv4ClientsTheirIPv4Address() async throws {
        try await Self.withServer(host: "::") { port in
            let ipv4 = try UDPClient()
            try ipv4.send(STUNMessage(.request, .binding).encoded(), toPort: port)
            let answer = try STUNMessage(decoding: try #require(ipv4.receive()))
            #expect(try answer.xorMappedAddress == STUNAddress(.ipv4(0x7F00_0001), port: UInt16(ipv4.port)))
            let ipv6 = try UDPClient(ipv6: true)
            try ipv6.send(STUNMessage(.request, .binding).encoded(), toPort: port)
            let second = try STUNMessage(decoding: try #require(ipv6.receive()))
            #expect(try second.xorMappedAddress == STUNAddress(.ipv6(1), port: UInt16(ipv6.port)))
        }
    }

    @Test func answersManyRequestsInFlight() async throws {
        try await Self.withServer(sourceLimit: nil) { port in
            let client = try UDPClient()
            let requests = (0..<200).map { _ in STUNMessage(.request, .binding) }
            for request in requests { try client.send(request.encoded(), toPort: port) }
            var answered = Set<STUNTransactionID>()
            while answered.count < requests.count, let bytes = client.receive() {
                let answer = try STUNMessage(decoding: bytes)
                #expect(try answer.xorMappedAddress?.port == UInt16(client.port))
                answered.insert(answer.transactionID)
            }
            #expect(answered == Set(requests.map(\.transactionID)))
        }
    }

    @Test func garbageGetsNoAnswerAndDoesNotStopTheServer() async throws {
        try await Self.withServer { port in
            let client = try UDPClient()
            var broken = STUNMessage(.request, .binding).encoded()
            broken[broken.count - 1] ^= 1
            let garbage: [[UInt8]] = [
                [], [0], Array(repeating: 0xFF, count: 1500), broken, STUNMessage(.indication, .binding).encoded(),
                STUNMessage(.successResponse, .binding).encoded(), Array(RFC5769.ipv4Response),
            ]
            for datagram in garbage { try client.send(datagram, toPort: port) }
            #expect(client.receive(within: .milliseconds(300)) == nil)
            let unknown = STUNMessage(
                .request, .binding, attributes: [STUNAttribute(type: .init(rawValue: 0x0003), value: [0, 0, 0, 0])])
            try client.send(unknown.encoded(), toPort: port)
            #expect(try STUNMessage(decoding: try #require(client.receive())).errorCode?.code == 420)
        }
    }

    /// Answers that arrive at `client` until it stays quiet for `quiet`.
    static func answers(to client: UDPClient, quiet: Duration = .milliseconds(400)) -> Int {
        var count = 0
        while client.receive(within: quiet) != nil { count += 1 }
        return count
    }

    @Test("Each source address gets a burst of answers and then its rate; another address is not held back")
    func answersPerSourceAddressAreLimited() async throws {
        try await Self.withServer(sourceLimit: .init(rate: 20, burst: 60)) { port in
            let client = try UDPClient()
            let start = ContinuousClock.now
            for _ in 0..<200 { try client.send(STUNMessage(.request, .binding).encoded(), toPort: port) }
            let first = Self.answers(to: client)
            #expect((60...64).contains(first), "\(first) answers to a burst of 200")
            // 127.0.0.2 is another source: its own bucket is full.
            let other = try UDPClient(address: 0x7F00_0002)
            for _ in 0..<10 { try other.send(STUNMessage(.request, .binding).encoded(), toPort: port) }
            #expect(Self.answers(to: other) == 10)
            // A second or so later the first source has what 20 a second gave back since its burst.
            try await Task.sleep(for: .seconds(1))
            let elapsed = ContinuousClock.now - start
            for _ in 0..<100 { try client.send(STUNMessage(.request, .binding).encoded(), toPort: port) }
            let later = Self.answers(to: client)
            let refilled = Int(20 * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
            #expect((refilled - 6...refilled + 2).contains(later), "\(later) answers \(elapsed) after the burst")
        }
    }

    @Test("A request from a source port below 1024 gets no answer (reflection towards a service's port)")
    func lowSourcePortsGetNothing() async throws {
        try await Self.withServer { port in
            // Binding a port below 1024 needs root (or CAP_NET_BIND_SERVICE), as the tests run.
            let low = try #require(
                (1000..<1024).reversed().lazy.compactMap { try? UDPClient(port: $0) }.first,
                "no port below 1024 could be bound: the test needs root")
            #expect(low.port < 1024)
            try low.send(STUNMessage(.request, .binding).encoded(), toPort: port)
            #expect(low.receive(within: .milliseconds(500)) == nil)
            let high = try UDPClient()
            try high.send(STUNMessage(.request, .binding).encoded(), toPort: port)
            #expect(high.receive() != nil)
        }
    }

    @Test func shutdownFreesThePort() async throws {
        var used = 0
        try await Self.withServer { used = $0 }
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let again = STUNServer(host: "127.0.0.1", port: used, logger: Self.quiet, onBound: { bound.yield($0) })
        // Cancelling its task also ends a server.
        let task = Task { try await again.run() }
        var iterator = ports.makeAsyncIterator()
        #expect(await iterator.next() == used)
        task.cancel()
        try await task.value
    }
}
