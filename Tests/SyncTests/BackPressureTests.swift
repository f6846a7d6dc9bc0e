import Foundation
import LayerModels
import LayerServer
import LayerTesting
import PostgresNIO
import Testing

/// A client that stops reading must cost a bounded amount of memory and slow nobody else: its
/// outbox stops taking changes when full, it is disconnected when it stays full, and it resumes
/// from the changelog when it comes back.
@Suite("Push back-pressure and session end")
struct BackPressureTests {
    @Test(
        "A client that never reads is disconnected while another device of the same conversation gets every message on time; the first resumes without loss"
    )
    func stalledClient() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let slow = try await harness.user("slow")
            let conversation = try await alice.conversation(with: ["slow"])
            let anchor = try #require(try await slow.sync()["anchor"]?.intValue)
            let stalled = try await StalledWebSocket.open(port: harness.fixture.server.port, token: slow.token)
            defer { stalled.close() }
            try await waitFor(devices: 1, of: "slow", harness)
            let watcher = try await harness.socket(alice)

            // 200 messages of 40 KB: more than the socket buffers between the server and the
            // stuck client hold.
            let part: JSONValue = ["mime_type": "text/plain", "body": .string(String(repeating: "x", count: 2000))]
            var sent: [String] = []
            for _ in 0..<200 {
                let response = try await alice.post(
                    "/\(path(conversation))/messages", ["parts": .array(Array(repeating: part, count: 20))])
                sent.append(try #require(response.json?["id"]?.stringValue))
            }
            // The reader keeps up with every message, in order, while the other client is stuck.
            var seen: [String] = []
            while seen.count < sent.count {
                let created = try await watcher.change("create", "Message")
                seen.append(created["body"]?["object"]?["id"]?.stringValue ?? "?")
            }
            #expect(seen == sent)

            // The stuck device is dropped (its record goes with it) within a few stall timeouts.
            try await waitFor(devices: 0, of: "slow", harness)

            // Back, it resumes from where its changelog stood and misses nothing.
            let back = try await harness.socket(slow, query: "&anchor=\(anchor)")
            var resumed: [String] = []
            while resumed.count < sent.count {
                let created = try await back.change("create", "Message", timeout: .seconds(10))
                resumed.append(created["body"]?["object"]?["id"]?.stringValue ?? "?")
            }
            #expect(resumed == sent)
            await back.close()
            await watcher.close()
        }
    }

    @Test("Heartbeats find a socket whose client no longer answers, even when nothing is sent to it")
    func deadConnection() async throws {
        var settings = quickPush
        settings.push.heartbeat = .milliseconds(500)
        try await SyncHarness.run(settings: settings) { harness in
            let ghost = try await harness.user("ghost")
            let silent = try await StalledWebSocket.open(port: harness.fixture.server.port, token: ghost.token)
            defer { silent.close() }
            try await waitFor(devices: 1, of: "ghost", harness)
            // Nothing is pushed to it; only its missing pongs give it away.
            try await waitFor(devices: 0, of: "ghost", harness)
        }
    }

    @Test("A socket and an event stream end when their session is deleted")
    func sessionEnds() async throws {
        var server = ServerSettings()
        server.introspectionCacheTTL = .milliseconds(200)
        try await SyncHarness.run(settings: quickPush, server: server) { harness in
            let alice = try await harness.user("alice")
            let socket = try await harness.socket(alice)
            let stream = try await harness.events(alice)
            #expect(stream.status == 200)
            #expect(try await socket.request("Counter.read")["success"] == .bool(true))
            #expect(try await alice.delete("/sessions/\(alice.token)").status == 204)
            let closed = try await socket.closed(timeout: .seconds(5))
            #expect(closed.code == 4401)
            #expect(try await stream.ended(timeout: .seconds(5)))
        }
    }

    /// Waits (up to 5 s) until `user` has `count` devices on record.
    private func waitFor(
        devices count: Int, of user: String, _ harness: SyncHarness, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var devices = -1
        for _ in 0..<50 {
            let rows = try await harness.fixture.server.postgres.query(
                "SELECT count(*) FROM sync.devices WHERE user_id = \(user)", logger: .test)
            for try await found in rows.decode(Int64.self) { devices = Int(found) }
            if devices == count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("\(user) has \(devices) devices, not \(count)", sourceLocation: sourceLocation)
    }
}

/// A WebSocket client that completes the upgrade and then never reads, with a tiny receive
/// buffer so that the server's writes back up quickly.
final class StalledWebSocket: Sendable {
    let descriptor: Int32

    /// Connects on a thread of its own: the calls block, and on the concurrency pool two of them
    /// at once could hold every thread while the server in this process waits for one to answer.
    static func open(port: Int, token: String) async throws -> StalledWebSocket {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try StalledWebSocket(port: port, token: token) }) }.start()
        }
    }

    private init(port: Int, token: String) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw FixtureError("socket() failed") }
        var size: Int32 = 2048
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        // An upgrade that never answers fails the test instead of holding its thread for good.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw FixtureError("connect() failed") }
        let request = """
            GET /websocket?session_token=\(token) HTTP/1.1\r
            Host: 127.0.0.1:\(port)\r
            Connection: Upgrade\r
            Upgrade: websocket\r
            Sec-WebSocket-Version: 13\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Protocol: layer-3.0\r
            \r

            """
        _ = request.utf8CString.withUnsafeBufferPointer { send(descriptor, $0.baseAddress, $0.count - 1, 0) }
        // Read the 101 and the first packets, then never again.
        var buffer = [UInt8](repeating: 0, count: 512)
        _ = recv(descriptor, &buffer, buffer.count, 0)
    }

    func close() {
        _ = Glibc.close(descriptor)
    }
}
