import Foundation
import LayerTesting
import STUNCodec
import Testing

/// The STUN server over real UDP against clients that share no code with it: coturn's
/// `turnutils_stunclient` and the Python library aioice. scripts/ensure-deps.sh installs both
/// (coturn from Debian, aioice into the project's .venv-tools/); a test whose tool is missing
/// fails and says so.
@Suite struct STUNInteropTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The full path of `name` on PATH.
    static func installed(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = (path.split(separator: ":") + ["/usr/bin"]).map { "\($0)/\(name)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "\(name) is not installed: run `bash scripts/ensure-deps.sh` (Debian package coturn)")
    }

    @Test func coturnClientLearnsItsAddressAndPort() async throws {
        let client = try Self.installed("turnutils_stunclient")
        let log = LogCapture()
        try await STUNServerTests.withServer(logger: log.logger()) { port in
            let (status, output) = try await ChildProcess.run(client, ["-p", "\(port)", "127.0.0.1"], timeout: .seconds(20))
            #expect(status == 0, "\(output)")
            // It prints "0: : IPv4. UDP reflexive addr: 127.0.0.1:51225".
            let reflexive = output.split(separator: "\n").compactMap { line in
                line.range(of: "UDP reflexive addr: ").map { String(line[$0.upperBound...]) }
            }
            let address = try #require(reflexive.first, "\(output)")
            #expect(address.hasPrefix("127.0.0.1:"))
            // The port it decoded is the one its datagrams came from, as the server saw them.
            let clientPort = try #require(Int(address.dropFirst("127.0.0.1:".count)))
            #expect(clientPort > 0)
            #expect(log.text.contains("\"to\": 127.0.0.1:\(clientPort)"), "\(log.text)")
        }
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func aioiceClientLearnsItsAddressAndChecksTheFingerprint(host: String) async throws {
        let python = Self.repository.appendingPathComponent(".venv-tools/bin/python").path
        let hint = "aioice is not installed in .venv-tools: run `bash scripts/ensure-deps.sh`"
        try #require(FileManager.default.isExecutableFile(atPath: python), "\(hint)")
        let probe = try await ChildProcess.run(python, ["-c", "import aioice"])
        try #require(probe.status == 0, "\(hint): \(probe.output)")
        try await STUNServerTests.withServer(host: "::") { port in
            let (status, output) = try await ChildProcess.run(python, ["-c", Self.aioiceClient, host, "\(port)"])
            #expect(status == 0, "\(output)")
            let lines = output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            let binding = try #require(lines.first { $0.first == "binding" }, "\(output)")
            // binding RESPONSE <mapped host> <mapped port> <own port> Layerline STUN
            #expect(Array(binding.prefix(3)) == ["binding", "RESPONSE", host])
            #expect(binding.count == 7 && binding[3] == binding[4], "\(output)")
            #expect(binding.suffix(2) == ["Layerline", "STUN"])
            let change = try #require(lines.first { $0.first == "change-request" }, "\(output)")
            #expect(change == ["change-request", "ERROR", "420", "Unknown", "Attribute"])
        }
    }

    /// A Binding request as an ICE agent sends it, then one with RFC 5780's CHANGE-REQUEST, which
    /// the server does not implement; aioice's parser rejects a response whose FINGERPRINT is
    /// wrong, and the script also requires one to be there.
    static let aioiceClient = """
        import socket, sys
        from aioice import stun

        host, port = sys.argv[1], int(sys.argv[2])
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, 0))
        sock.settimeout(5)

        def exchange(request):
            request.add_fingerprint()
            sock.sendto(bytes(request), (host, port))
            data, _ = sock.recvfrom(2048)
            response = stun.parse_message(data)
            assert response.transaction_id == request.transaction_id
            assert "FINGERPRINT" in response.attributes
            return response

        binding = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
        binding.attributes["SOFTWARE"] = "aioice"
        binding.attributes["PRIORITY"] = 1853824767
        binding.attributes["ICE-CONTROLLING"] = 1
        response = exchange(binding)
        mapped_host, mapped_port = response.attributes["XOR-MAPPED-ADDRESS"]
        print("binding", response.message_class.name, mapped_host, mapped_port, sock.getsockname()[1],
              response.attributes["SOFTWARE"])

        change = stun.Message(message_method=stun.Method.BINDING, message_class=stun.Class.REQUEST)
        change.attributes["CHANGE-REQUEST"] = 6
        response = exchange(change)
        print("change-request", response.message_class.name, *response.attributes["ERROR-CODE"])
        """
}
