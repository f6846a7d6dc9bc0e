import AsyncHTTPClient
import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOSSL
import Testing

/// The suite as an operator deploys it, on one machine: every service a process of its own (as
/// many replicas as asked), all on one PostgreSQL database of their own, behind nginx from
/// Debian's packages running the project's own edge configuration, deploy/nginx/nginx.conf.
/// Only what differs on a test machine is rewritten: the paths of its files, the addresses it
/// listens on, and the upstreams file (the replicas' loopback addresses, without `resolve`).
final class EdgeDeployment: Sendable {
    let directory: URL
    let database: DatabaseSettings
    let internalTokens = InternalTokens.random()
    let operatorToken = Secrets.randomToken()
    /// The key of signed content links, the same for every sync replica.
    let linkSecret = Secrets.randomToken()
    /// Replicas by service name (`auth`, `sync`, `names`, `voip`).
    let replicas: [String: [ServiceProcess]]
    let edgePort: Int
    let nginx: ChildProcess
    /// What clients use: TLS to the edge, trusting its certificate.
    let http: HTTPClient

    var edgeURL: String { "https://127.0.0.1:\(edgePort)" }
    var edge: TestClient { TestClient(baseURL: edgeURL, http: http) }
    /// One replica's own address, past the edge (for the operator API, which the edge refuses).
    func direct(_ service: String, _ index: Int = 0) -> TestClient {
        TestClient(baseURL: "http://127.0.0.1:\(ports[service]![index])")
    }
    let ports: [String: [Int]]

    static let projectRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts every replica at once (they race to migrate the empty database) and the edge in front.
    /// `environment` adds settings to every service.
    static func start(
        replicas counts: [String: Int] = [:], environment extra: [String: String] = [:]
    ) async throws -> EdgeDeployment {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("edge-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificates = directory.appendingPathComponent("certs")
        let made = try await ChildProcess.run(
            "/bin/bash", [projectRoot.appendingPathComponent("deploy/make-dev-certs.sh").path, "--out", certificates.path])
        guard made.status == 0 else { throw FixtureError("make-dev-certs.sh failed: \(made.output)") }

        var ports: [String: [Int]] = [:]
        for service in ["auth", "sync", "names", "voip"] {
            var servicePorts: [Int] = []
            for _ in 0..<(counts[service] ?? 1) { servicePorts.append(try await LiveServer.freePort()) }
            ports[service] = servicePorts
        }
        let database = try await TestDatabase.isolated()
        let deployment = try EdgeDeployment(
            directory: directory, database: database, ports: ports, edgePort: try await LiveServer.freePort(),
            httpPort: try await LiveServer.freePort(), environment: extra)
        do {
            try await withThrowingTaskGroup { group in
                for process in deployment.replicas.values.joined() {
                    group.addTask { try await process.start() }
                }
                try await group.waitForAll()
            }
            try await deployment.waitForEdge()
            return deployment
        } catch {
            await deployment.stop()
            throw FixtureError("the deployment did not start: \(error)\n\(await deployment.logs())")
        }
    }

    private init(
        directory: URL, database: DatabaseSettings, ports: [String: [Int]], edgePort: Int, httpPort: Int,
        environment extra: [String: String]
    ) throws {
        self.directory = directory
        self.database = database
        self.ports = ports
        self.edgePort = edgePort
        let certificates = directory.appendingPathComponent("certs").path
        func url(_ service: String) -> String { "http://127.0.0.1:\(ports[service]![0])" }
        let common = [
            "LAYER_DATABASE_URL": database.url, "LAYER_DATABASE_MAX_CONNECTIONS": "6",
            "LAYER_TRUSTED_PROXIES": "127.0.0.1", "LOG_LEVEL": "info", "LAYER_CONTENT_LINK_SECRET": linkSecret,
        ].merging(internalTokens.environment) { $1 }.merging(extra) { $1 }
        let own: [String: [String: String]] = [
            "auth": [
                "LAYER_OPERATOR_TOKEN": operatorToken, "LAYER_SYNC_URL": url("sync"),
                "LAYER_CA_CERTIFICATE_FILE": "\(certificates)/device-ca.pem",
                "LAYER_CA_KEY_FILE": "\(certificates)/device-ca.key",
            ],
            "sync": ["LAYER_AUTH_URL": url("auth"), "LAYER_NAMES_URL": url("names")],
            "names": ["LAYER_AUTH_URL": url("auth")],
            "voip": [
                "LAYER_AUTH_URL": url("auth"), "LAYER_SYNC_URL": url("sync"), "LAYER_NAMES_URL": url("names"),
                "LAYER_STUN_HOST": "127.0.0.1", "LAYER_STUN_PORT": "0",
            ],
        ]
        var replicas: [String: [ServiceProcess]] = [:]
        for (service, servicePorts) in ports {
            replicas[service] = servicePorts.map {
                ServiceProcess("layer-\(service)", port: $0, environment: common.merging(own[service] ?? [:]) { $1 })
            }
        }
        self.replicas = replicas

        let configuration = try Self.edgeConfiguration(directory: directory, httpsPort: edgePort, httpPort: httpPort)
        try configuration.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        try Self.upstreams(ports).write(
            to: directory.appendingPathComponent("upstreams.conf"), atomically: true, encoding: .utf8)
        nginx = try ChildProcess(
            Self.nginxBinary(),
            [
                "-e", "stderr", "-p", directory.path + "/", "-c", directory.appendingPathComponent("nginx.conf").path,
                "-g", "daemon off; pid \(directory.path)/nginx.pid;",
            ])
        http = try Self.client(certificatePEM: nil, key: nil)
    }

    /// TLS to the edge. Its development certificate is a self-signed leaf (CA:FALSE, no
    /// keyCertSign), which curl's OpenSSL takes as a trust anchor but BoringSSL does not, so the
    /// tests' clients do not verify it: what they test is the edge, not that certificate.
    static func tls(certificatePEM: String? = nil, key: P256.Signing.PrivateKey? = nil) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        if let certificatePEM, let key {
            tls.certificateChain = [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))]
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        }
        return tls
    }

    /// An HTTP client of the edge, presenting a client certificate when given one. The caller
    /// shuts it down (but for ``http``, which ``stop()`` does).
    static func client(certificatePEM: String?, key: P256.Signing.PrivateKey?) throws -> HTTPClient {
        HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: .init(tlsConfiguration: try tls(certificatePEM: certificatePEM, key: key)))
    }

    /// deploy/nginx/nginx.conf with its paths pointed into `directory` and its listeners on
    /// loopback ports; each rewrite must find its text exactly once, or the configuration changed
    /// in a way this test must learn about.
    static func edgeConfiguration(directory: URL, httpsPort: Int, httpPort: Int) throws -> String {
        var text = try String(
            contentsOf: projectRoot.appendingPathComponent("deploy/nginx/nginx.conf"), encoding: .utf8)
        let temporary = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { name in
            let path = directory.appendingPathComponent("temp-\(name)")
            try? FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            // nginx's workers run as an unprivileged user when it starts as root.
            _ = chmod(path.path, 0o777)
            return "    \(name)_temp_path \(path.path);"
        }
        let rewrites: [(String, String)] = [
            ("/etc/nginx/certs/", directory.appendingPathComponent("certs").path + "/"),
            ("/etc/nginx/layer/upstreams.conf", directory.appendingPathComponent("upstreams.conf").path),
            ("listen 80 default_server;", "listen 127.0.0.1:\(httpPort) default_server;"),
            ("listen 443 ssl http2 default_server;", "listen 127.0.0.1:\(httpsPort) ssl http2 default_server;"),
            ("\nhttp {\n", "\nhttp {\n" + temporary.joined(separator: "\n") + "\n"),
        ]
        for (old, new) in rewrites {
            guard text.contains(old) else { throw FixtureError("deploy/nginx/nginx.conf no longer has \(old)") }
            text = text.replacingOccurrences(of: old, with: new)
        }
        return text
    }

    /// The upstreams of deploy/nginx/upstreams.conf, each listing its replicas on loopback, and
    /// the sync service's again for push, without kept-alive connections.
    static func upstreams(_ ports: [String: [Int]]) -> String {
        func servers(_ service: String) -> String {
            ports[service, default: []].map { "    server 127.0.0.1:\($0);" }.joined(separator: "\n")
        }
        let kept = ports.keys.sorted().map { service in
            """
            upstream layer_\(service) {
                zone layer_\(service) 64k;
            \(servers(service))
                keepalive 32;
                keepalive_timeout 20s;
            }
            """
        }
        let push = """
            upstream layer_sync_push {
                zone layer_sync_push 64k;
            \(servers("sync"))
            }
            """
        return (kept + [push]).joined(separator: "\n\n") + "\n"
    }

    static func nginxBinary() throws -> String {
        for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw FixtureError("no nginx: bash scripts/ensure-deps.sh installs Debian's")
    }

    /// Waits until the edge answers over TLS.
    private func waitForEdge() async throws {
        let started = ContinuousClock.now
        var failure = ""
        while ContinuousClock.now - started < .seconds(20) {
            do {
                _ = try await edge.request(.GET, "/", accept: nil)
                return
            } catch {
                failure = "\(error)"
            }
            if let status = Subprocess.exitStatus(of: nginx.pid, block: false) {
                throw FixtureError("nginx exited with \(status): \(nginx.output)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw FixtureError("the edge did not answer within 20 s (\(failure)): \(nginx.output)")
    }

    /// Registers an app with a provider and key as docs/deploy.md has an operator do it inside the
    /// auth container (`docker compose exec auth layer admin …`): the `layer` command with nothing
    /// but the auth service's environment, its port and the operator token (here from a file).
    func registerApp() async throws -> AuthFixture.TestApp {
        let key = try TestKeys.key(0)
        let keyFile = directory.appendingPathComponent("provider-key.pem")
        try key.publicKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let appURI = try await admin(["create-app", "--name", "Edge test"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let appID = try #require(LayerID(parsing: appURI, as: .apps), "create-app printed \(appURI)")
        let added = try await admin(["add-key", "--app", appURI, "--public-key", keyFile.path])
        let keyID = try #require(added.firstMatch(of: /kid: (\S+)/)?.1, "add-key printed \(added)")
        let providerID = try #require(added.firstMatch(of: /iss: (\S+)/)?.1, "add-key printed \(added)")
        return AuthFixture.TestApp(
            id: appID.uuid, providerID: String(providerID), keyID: String(keyID),
            signer: IdentityTokenSigner(privateKey: key, keyID: String(keyID), providerID: String(providerID)))
    }

    /// Runs `layer admin <arguments>` as an operator does in the auth container: with nothing but
    /// the auth service's environment, its port and the operator token (here from a file).
    func admin(_ arguments: [String]) async throws -> String {
        let tokenFile = directory.appendingPathComponent("operator-token")
        try (operatorToken + "\n").write(to: tokenFile, atomically: true, encoding: .utf8)
        let environment = ["LAYER_PORT": String(ports["auth"]![0]), "LAYER_OPERATOR_TOKEN_FILE": tokenFile.path]
        // A data directory without a dev.json, so that nothing of a local `layer dev` is read.
        let noDev = directory.appendingPathComponent("no-dev").path
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer"), ["admin"] + arguments + ["--data-dir", noDev], environment: environment)
        guard try await child.wait(timeout: .seconds(30)) == 0 else {
            throw FixtureError("layer admin \(arguments) failed: \(child.output)")
        }
        return child.output
    }

    /// A session for `user` through the edge: a nonce, an identity token, `POST /sessions`.
    func session(_ user: String, app: AuthFixture.TestApp, via client: TestClient? = nil) async throws -> TestResponse {
        let client = client ?? edge
        let nonce = try await client.request(.POST, "/nonces")
        guard nonce.status == 201, let value = nonce.json?["nonce"]?.stringValue else {
            throw FixtureError("POST /nonces through the edge answered \(nonce.status): \(nonce.text)")
        }
        return try await client.request(
            .POST, "/sessions",
            json: [
                "identity_token": .string(try app.signer.token(userID: user, nonce: value)), "app_id": .string(app.uri),
            ])
    }

    /// A user with a session opened through the edge, sending through the edge.
    func user(_ name: String, app: AuthFixture.TestApp) async throws -> UserClient {
        let opened = try await session(name, app: app)
        guard opened.status == 201, let token = opened.json?["session_token"]?.stringValue else {
            throw FixtureError("POST /sessions through the edge answered \(opened.status): \(opened.text)")
        }
        return UserClient(id: name, token: token, client: edge)
    }

    /// What the edge logged (its access log goes to its standard output).
    var edgeLog: String { nginx.output }

    func logs() async -> String {
        var text = "--- nginx\n\(nginx.output)\n"
        for (service, processes) in replicas.sorted(by: { $0.key < $1.key }) {
            for (index, process) in processes.enumerated() {
                text += "--- \(service) \(index)\n\(await process.output.suffix(4000))\n"
            }
        }
        return text
    }

    func stop() async {
        nginx.signal(SIGTERM)
        _ = try? await nginx.wait(timeout: .seconds(10))
        await withTaskGroup { group in
            for process in replicas.values.joined() {
                group.addTask { _ = try? await process.stop() }
            }
        }
        try? await http.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a deployment, and stops it whatever happens.
    static func run<T: Sendable>(
        replicas: [String: Int] = [:], environment: [String: String] = [:],
        _ body: (EdgeDeployment) async throws -> T
    ) async throws -> T {
        let deployment = try await start(replicas: replicas, environment: environment)
        do {
            let result = try await body(deployment)
            await deployment.stop()
            return result
        } catch {
            let logs = await deployment.logs()
            await deployment.stop()
            throw FixtureError("\(error)\n\(logs.suffix(20_000))")
        }
    }
}
