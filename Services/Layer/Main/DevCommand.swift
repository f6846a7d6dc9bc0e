import ArgumentParser
import Foundation
import LayerDevelopment
import LayerModels
import LayerServer
import LayerSuite
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import _CryptoExtras

/// `layer dev`: the whole suite in one process on one port, on a private PostgreSQL it starts
/// itself (or on LAYER_DATABASE_URL), with a demo app to try at once.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev", abstract: "Run the whole suite locally on a private PostgreSQL.")

    @Option(help: "HTTP port (0 picks a free one).") var port: Int = 8080
    @Option(help: "UDP port of the STUN server.") var stunPort: Int = 3478
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Where PostgreSQL's data, secrets and dev.json live.") var dataDir: String = ".layer"

    func run() async throws {
        Observability.bootstrapLogging()
        let logger = Logger(label: "layer-dev")
        raiseOpenFileLimit()
        let directory = URL(fileURLWithPath: dataDir).standardizedFileURL
        // Secrets live here (secrets.json, dev.json, the demo key, the database password): only its
        // owner may enter it.
        try Secrets.createPrivateDirectory(at: directory)
        let secrets = try DevSecrets.loadOrCreate(in: directory)

        var environment = Self.environment(secrets: secrets)
        // A free port is chosen here, so that dev.json can name it before the server binds it.
        let stunPort = self.stunPort == 0 ? try Self.freeUDPPort() : self.stunPort
        environment["LAYER_STUN_PORT"] = String(stunPort)
        environment["LAYER_STUN_HOST"] = environment["LAYER_STUN_HOST"] ?? host
        // A TURN server of its own, unless the developer names theirs.
        var turn: DevTURNServer?
        if environment["LAYER_TURN_URIS"] == nil, let secret = secrets.turnSecret {
            turn = try DevTURNServer.prepare(directory: directory, host: host, secret: secret, logger: logger)
            environment["LAYER_TURN_URIS"] = turn?.uris.joined(separator: ",")
        }
        var reader = SettingsReader(environment)
        var server = ServerSettings.read(&reader, defaultPort: port, requireDatabase: false)
        let plans = Suite.configured(from: &reader)
        try reader.validate("layer dev")
        server.host = host
        server.port = port

        var embedded: EmbeddedPostgres?
        if server.database == nil {
            embedded = try EmbeddedPostgres.start(directory: directory, logger: logger)
            server.database = embedded?.settings
        }
        defer { embedded?.stop() }

        let postgres = server.database!.makeClient(logger: logger)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let bootstrap = DemoBootstrap(
            directory: directory, operatorToken: secrets.operatorToken, internalTokens: secrets.internalTokens ?? [:],
            stunPort: stunPort, turnSecret: secrets.turnSecret, turnURIs: turn?.uris ?? [],
            corsOrigins: environment["LAYER_CORS_ORIGINS"] ?? "",
            scheme: server.tlsCertificatePath == nil ? "http" : "https",
            host: host, ports: ports, logger: logger)
        let app = try buildApplication(
            plans, settings: server, postgres: postgres, extraServices: [bootstrap] + (turn.map { [$0] } ?? []),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger)
        try await ServiceGroup(configuration: .layer(app, settings: server, logger: logger)).run()
    }

    /// A UDP port nobody uses now (the kernel's pick for port 0).
    static func freeUDPPort() throws -> Int {
        let socket = try DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? socket.close().wait() }
        return socket.localAddress?.port ?? 3478
    }

    /// What browsers may call `layer dev` from when `LAYER_CORS_ORIGINS` does not say.
    static let localOrigins = "http://localhost:*,http://127.0.0.1:*,http://[::1]:*"

    /// The process's environment with the secrets `layer dev` keeps in its data directory in
    /// place of the operator's: the tokens, the keys of the CA it keeps in the database and of
    /// content links, and the TURN secret.
    static func environment(
        secrets: DevSecrets, _ base: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: String] {
        var environment = base
        environment["LAYER_INTERNAL_TOKEN"] = nil
        environment.merge(InternalTokens(secrets.internalTokens ?? [:]).environment) { $1 }
        environment["LAYER_CONTENT_LINK_SECRET"] = secrets.contentLinkSecret
        environment["LAYER_OPERATOR_TOKEN"] = secrets.operatorToken
        environment["LAYER_CA_KEY_SECRET"] = secrets.caKeySecret
        environment["LAYER_TURN_SECRET"] = secrets.turnSecret
        environment["LAYER_CA_CERTIFICATE_FILE"] = nil
        environment["LAYER_CA_KEY_FILE"] = nil
        // Webhooks may point at this machine (a receiver under development), unless the operator says otherwise.
        environment["LAYER_WEBHOOK_PRIVATE_TARGETS"] = base["LAYER_WEBHOOK_PRIVATE_TARGETS"] ?? "true"
        // Web pages served from this machine may call it (CORS), unless the operator says otherwise.
        environment["LAYER_CORS_ORIGINS"] = base["LAYER_CORS_ORIGINS"] ?? Self.localOrigins
        return environment
    }
}

/// Once the server listens: makes sure the demo app, provider and key exist, writes dev.json and
/// prints how to try the suite.
struct DemoBootstrap: Service {
    let directory: URL
    let operatorToken: String
    let internalTokens: [String: String]
    let stunPort: Int
    let turnSecret: String?
    let turnURIs: [String]
    /// What browsers may call the suite from, as the banner says.
    let corsOrigins: String
    let scheme: String
    let host: String
    let ports: AsyncStream<Int>
    let logger: Logger

    func run() async throws {
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { return }
        let address = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
        let baseURL = "\(scheme)://\(address):\(port)"
        do {
            let info = try await ensureDemo(baseURL: baseURL)
            FileHandle.standardOutput.write(Data((Self.banner(info, corsOrigins: corsOrigins) + "\n").utf8))
        } catch {
            logger.error("Setting up the demo app failed", metadata: ["error": "\(error)"])
        }
        try? await gracefulShutdown()
    }

    private func ensureDemo(baseURL: String) async throws -> DevInfo {
        let client = OperatorClient(baseURL: baseURL, token: operatorToken)
        if var info = DevInfo.load(from: directory), try await client.appExists(info.appID),
            FileManager.default.fileExists(atPath: info.privateKeyPath)
        {
            info.baseURL = baseURL
            info.operatorToken = operatorToken
            info.internalTokens = internalTokens
            info.stunPort = stunPort
            info.turnSecret = turnSecret
            info.turnURIs = turnURIs
            try info.save(in: directory)
            return info
        }
        let keyPath = directory.appendingPathComponent("demo-key.pem")
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try Secrets.writePrivately(Data(privateKey.pemRepresentation.utf8), to: keyPath)
        let app = try await client.createApp(name: "Demo app")
        let provider = try await client.createProvider(app: app)
        let key = try await client.registerKey(app: app, provider: provider, publicKeyPEM: privateKey.publicKey.pemRepresentation)
        let info = DevInfo(
            baseURL: baseURL, operatorToken: operatorToken, internalTokens: internalTokens, appID: app,
            providerID: provider, keyID: key, privateKeyPath: keyPath.path, stunPort: stunPort, turnSecret: turnSecret,
            turnURIs: turnURIs)
        try info.save(in: directory)
        return info
    }

    static func banner(_ info: DevInfo, corsOrigins: String) -> String {
        """

        Layerline is running at \(info.baseURL)
          demo app:      \(info.appID)
          provider iss:  \(info.providerID)
          key kid:       \(info.keyID)
          private key:   \(info.privateKeyPath)
          STUN (UDP):    \(info.stunPort.map(String.init) ?? "-")
          TURN (coturn): \(info.turnURIs?.first ?? "- (install coturn: scripts/ensure-deps.sh)")
          browsers:      pages on \(corsOrigins.isEmpty ? "no origin" : corsOrigins) may call it (CORS);
                         allow others with `layer admin allow-origins --app <app> --origin https://…`

        Try it:
          A='Accept: application/vnd.layer+json; version=3.0'
          NONCE=$(curl -s -X POST -H "$A" \(info.baseURL)/nonces | sed 's/.*"nonce":"\\([^"]*\\)".*/\\1/')
          TOKEN=$(layer token --user alice --nonce "$NONCE")
          curl -s -H "$A" -H 'Content-Type: application/json' \\
            -d "{\\"identity_token\\":\\"$TOKEN\\",\\"app_id\\":\\"\(info.appID)\\"}" \(info.baseURL)/sessions

        Everything above is also in dev.json. Stop with Ctrl-C.

        """
    }
}
