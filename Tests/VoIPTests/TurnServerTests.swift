import Crypto
import Foundation
import LayerModels
import LayerTesting
import LayerVoIP
import Testing

/// The credentials of `GET /turn-credentials` against a real coturn (`use-auth-secret`, on
/// loopback only): a TURN client allocates a relay with them, and coturn refuses them once they
/// have expired or when the password is not the service's. The client is aioice's TURN client,
/// which shares no code with the suite; scripts/ensure-deps.sh installs coturn and aioice.
@Suite(.serialized) struct TurnServerTests {
    static let secret = "turn-test-\(UUID().uuidString)"

    @Test("coturn accepts the service's credentials for an allocation, and refuses expired or forged ones")
    func coturnAcceptsTheCredentials() async throws {
        let turnserver = try STUNInteropTests.installed("turnserver")
        let python = STUNInteropTests.repository.appendingPathComponent(".venv-tools/bin/python").path
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "aioice is not installed in .venv-tools: run `bash scripts/ensure-deps.sh`")
        let port = Int.random(in: 20_000...29_000)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coturn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let coturn = try ChildProcess(
            turnserver,
            [
                "-n", "--listening-ip=127.0.0.1", "--listening-port=\(port)", "--relay-ip=127.0.0.1",
                "--min-port=\(port + 1000)", "--max-port=\(port + 1100)", "--use-auth-secret",
                "--static-auth-secret=\(Self.secret)", "--realm=layerline.test", "--no-cli", "--no-tls", "--no-dtls",
                "--allow-loopback-peers", "--log-file=stdout", "--simple-log", "--db=\(folder.path)/turndb",
                "--pidfile=\(folder.path)/turnserver.pid",
            ])
        defer { coturn.signal(SIGTERM) }

        let settings = VoIPSettings(
            stunPort: 0, turnSecret: Self.secret, turnURIs: ["turn:127.0.0.1:\(port)?transport=udp"], turnTTLSeconds: 600)
        try await VoIPHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            let credentials = try #require(try await alice.get("/turn-credentials").json)
            let username = try #require(credentials["username"]?.stringValue)
            let password = try #require(credentials["password"]?.stringValue)

            // coturn may take a moment to listen: the first allocation is retried for a few seconds.
            var allocated: (status: Int32, output: String) = (-1, "")
            for _ in 0..<20 {
                allocated = try await Self.allocate(python, port: port, username: username, password: password)
                if allocated.status == 0 { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(allocated.status == 0, "\(allocated.output)\n\(coturn.output)")
            #expect(allocated.output.hasPrefix("allocated 127.0.0.1 "), "\(allocated.output)")

            // The same user name with an expiry in the past, signed the same way: refused.
            let expired = "\(Int(Date().timeIntervalSince1970) - 60):alice"
            let stale = try await Self.allocate(
                python, port: port, username: expired, password: Self.sign(expired, Self.secret))
            #expect(stale.status == 3 && stale.output.contains("401"), "\(stale.output)")
            // A password not made with the shared secret: refused.
            let forged = try await Self.allocate(
                python, port: port, username: username, password: Self.sign(username, "guess"))
            #expect(forged.status == 3 && forged.output.contains("401"), "\(forged.output)")
        }
    }

    /// The TURN REST API password of `username` under `secret`, computed here on its own.
    static func sign(_ username: String, _ secret: String) -> String {
        Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(username.utf8), using: SymmetricKey(data: Data(secret.utf8))))
            .base64EncodedString()
    }

    /// Runs aioice's TURN client once: exit 0 and "allocated <relay host> <port>", or 3 and why not.
    static func allocate(_ python: String, port: Int, username: String, password: String) async throws -> (
        status: Int32, output: String
    ) {
        try await ChildProcess.run(python, ["-c", client, "127.0.0.1", "\(port)", username, password], timeout: .seconds(30))
    }

    static let client = """
        import asyncio, sys
        from aioice import turn

        async def main():
            host, port, username, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
            try:
                transport, _ = await asyncio.wait_for(turn.create_turn_endpoint(
                    asyncio.DatagramProtocol, server_addr=(host, port), username=username, password=password,
                    lifetime=60, transport="udp"), 10)
            except Exception as error:
                print("refused", type(error).__name__, error)
                sys.exit(3)
            relay = transport.get_extra_info("sockname")
            print("allocated", relay[0], relay[1])
            transport.close()

        asyncio.run(main())
        """
}
