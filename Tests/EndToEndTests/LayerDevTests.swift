import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// The `layer` binary as a person uses it: `layer dev` on its own private PostgreSQL, the curl
/// walk-through of the README, the admin and token commands, a clean stop and a restart.
@Suite(.serialized) struct LayerDevTests {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The keys of dev.json as they are.
    struct DevJSON: Decodable {
        var base_url: String
        var operator_token: String
        var app_id: String
        var provider_id: String
        var key_id: String
        var private_key_path: String
        var stun_port: Int
        var turn_secret: String
        var turn_uris: [String]?
    }

    /// Starts `layer dev` on a free port in `directory` and waits for its dev.json.
    func startDev(in directory: URL, environment: [String: String] = [:]) async throws -> (ChildProcess, DevJSON) {
        let devJSON = directory.appendingPathComponent("dev.json")
        let started = Date()
        let child = try ChildProcess(
            try ChildProcess.builtProduct("layer"), ["dev", "--port", "0", "--stun-port", "0", "--data-dir", directory.path],
            environment: ["LAYER_DATABASE_URL": "", "LOG_LEVEL": "info"].merging(environment) { $1 })
        for _ in 0..<600 {
            let written = (try? FileManager.default.attributesOfItem(atPath: devJSON.path)[.modificationDate]) as? Date
            if let written, written > started, let data = try? Data(contentsOf: devJSON),
                let info = try? JSONDecoder().decode(DevJSON.self, from: data)
            {
                return (child, info)
            }
            if let status = try await child.wait(timeout: .milliseconds(100)) {
                throw FixtureError("layer dev exited with \(status): \(child.output)")
            }
        }
        child.signal(SIGKILL)
        throw FixtureError("layer dev did not write dev.json: \(child.output)")
    }

    /// Runs `body` against a `layer dev` in a fresh directory, then stops it and waits for the end.
    func withDev(environment: [String: String] = [:], _ body: (URL, DevJSON) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-dev-\(UUID().uuidString)")
        defer { Self.remove(directory) }
        let (dev, info) = try await startDev(in: directory, environment: environment)
        do {
            try await body(directory, info)
        } catch {
            dev.signal(SIGTERM)
            _ = try await dev.wait(timeout: .seconds(30))
            throw error
        }
        dev.signal(SIGTERM)
        #expect(try await dev.wait(timeout: .seconds(30)) == 0)
    }

    /// Deletes a data directory and, as root, its cluster, which lives outside it.
    static func remove(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory)
        let cluster = EmbeddedPostgres.serverFolder(for: directory)
        if cluster != directory { try? FileManager.default.removeItem(at: cluster) }
    }

    func layer(_ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(try ChildProcess.builtProduct("layer"), arguments)
        guard result.status == 0 else { throw FixtureError("layer \(arguments) failed: \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The data directory is its owner's alone (0700), and so is every secret in it (0600).
    func expectPrivate(_ directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        func mode(_ name: String) throws -> Int {
            let path = name.isEmpty ? directory.path : directory.appendingPathComponent(name).path
            var info = stat()
            try #require(lstat(path, &info) == 0, "\(path) is missing", sourceLocation: sourceLocation)
            return Int(info.st_mode & 0o7777)
        }
        #expect(try mode("") == 0o700, sourceLocation: sourceLocation)
        for secret in ["dev.json", "secrets.json", "postgres.password", "demo-key.pem"] {
            #expect(try mode(secret) == 0o600, "\(secret)", sourceLocation: sourceLocation)
        }
    }

    @Test func walkThroughStopAndRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-dev-\(UUID().uuidString)")
        defer { Self.remove(directory) }
        // A data directory that an earlier version left open to others is narrowed.
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])

        let (dev, info) = try await startDev(in: directory)
        let client = TestClient(baseURL: info.base_url)
        // The banner follows dev.json, and its output is read as it comes: it may take a moment.
        for _ in 0..<100 where !dev.output.contains("Layerline is running at") {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(dev.output.contains("Layerline is running at \(info.base_url)"))
        try expectPrivate(directory)

        // The README's walk-through.
        let nonce = try #require(try await client.request(.POST, "/nonces").json?["nonce"]?.stringValue)
        let token = try await layer(["token", "--user", "alice", "--nonce", nonce, "--data-dir", directory.path])
        let created = try await client.request(
            .POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(info.app_id)])
        #expect(created.status == 201)
        let session = try #require(created.json?["session_token"]?.stringValue)
        let current = try await client.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(session))
        #expect(current.json?["user_id"] == "alice")

        // The sync service answers on the same port and checks the session with the auth service over HTTP.
        let auth = AuthFixture.sessionHeader(session)
        let conversation = try await client.request(.POST, "/conversations", headers: auth, json: ["participants": ["bob"]])
        #expect(conversation.status == 201)
        let conversationPath = try #require(
            conversation.json?["id"]?.stringValue?.replacingOccurrences(of: "layer:///", with: "/"))
        let message = try await client.request(
            .POST, "\(conversationPath)/messages", headers: auth, json: ["parts": [["mime_type": "text/plain", "body": "hi"]]])
        #expect(message.status == 201)
        let synced = try await client.request(.POST, "/sync", headers: auth, json: ["anchor": 0, "policy": "complete"])
        #expect(synced.json?["operations"]?.arrayValue?.count == 2)

        // The VoIP service answers there too, and its STUN server on the port dev.json names,
        // to a standard client (coturn's, installed by scripts/ensure-deps.sh).
        let call = try await client.request(
            .POST, "/calls", headers: auth, json: ["callee": "layer:///identities/alice", "caller_token": "t"])
        #expect(call.status == 422 && call.errorProperty == "callee", "calling yourself: \(call.text)")
        #expect(info.stun_port > 0 && !info.turn_secret.isEmpty)
        let stun = try await ChildProcess.run(
            "/usr/bin/turnutils_stunclient", ["-p", "\(info.stun_port)", "127.0.0.1"], timeout: .seconds(20))
        #expect(stun.status == 0 && stun.output.contains("UDP reflexive addr: 127.0.0.1:"), "\(stun.output)")

        // Web pages served from this machine may call it (CORS), and the banner says so; others may not.
        #expect(dev.output.contains("http://localhost:*"))
        for (origin, allowed) in [
            ("http://localhost:5173", true), ("http://127.0.0.1:3000", true), ("https://evil.example", false),
        ] {
            let preflight = try await client.request(
                .OPTIONS, "/conversations",
                headers: [
                    ("Origin", origin), ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "authorization"),
                ],
                accept: nil)
            #expect((preflight.status == 204) == allowed, "\(origin): \(preflight.status)")
            #expect(preflight.headers.first(name: "Access-Control-Allow-Origin") == (allowed ? origin : nil))
        }

        // Its OpenAPI document covers every service, as `layer openapi` prints it.
        let document = try await client.request(.GET, "/openapi.yaml", accept: nil)
        #expect(document.text.trimmingCharacters(in: .whitespacesAndNewlines) == (try await layer(["openapi"])))

        // A clean stop on SIGTERM: the process ends and so does its PostgreSQL.
        dev.signal(SIGTERM)
        #expect(try await dev.wait(timeout: .seconds(30)) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("postgres/postmaster.pid").path))

        // A restart keeps the data: the same demo app, and the session still works.
        let (again, restarted) = try await startDev(in: directory)
        defer { again.signal(SIGTERM) }
        #expect(restarted.app_id == info.app_id)
        #expect(restarted.key_id == info.key_id)
        try expectPrivate(directory)
        let after = try await TestClient(baseURL: restarted.base_url)
            .request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(session))
        #expect(after.status == 200)
        again.signal(SIGINT)
        #expect(try await again.wait(timeout: .seconds(30)) == 0)
    }

    /// A session of `user` in the demo app, signed in as the README's walk-through does.
    func signIn(_ user: String, directory: URL, info: DevJSON) async throws -> String {
        let client = TestClient(baseURL: info.base_url)
        let nonce = try #require(try await client.request(.POST, "/nonces").json?["nonce"]?.stringValue)
        let token = try await layer(["token", "--user", user, "--nonce", nonce, "--data-dir", directory.path])
        let created = try await client.request(
            .POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(info.app_id)])
        return try #require(created.json?["session_token"]?.stringValue, "\(created.text)")
    }

    @Test("layer dev runs coturn: the credentials of GET /turn-credentials allocate relays that carry data")
    func turnServerRelaysWithTheAPICredentials() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/turnserver"),
            "coturn is not installed: run `bash scripts/ensure-deps.sh`")
        var turnPID: pid_t = 0
        try await withDev { directory, info in
            let uri = try #require(info.turn_uris?.first, "dev.json names no TURN server")
            let session = try await signIn("alice", directory: directory, info: info)
            let credentials = try #require(
                try await TestClient(baseURL: info.base_url)
                    .request(.GET, "/turn-credentials", headers: AuthFixture.sessionHeader(session)).json)
            let uris = credentials["uris"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(uris.contains(uri), "\(uris)")
            let username = try #require(credentials["username"]?.stringValue)
            let password = try #require(credentials["password"]?.stringValue)
            // turn:127.0.0.1:<port>?transport=udp
            let address = try #require(uri.dropFirst("turn:".count).split(separator: "?").first)
            let port = try #require(address.split(separator: ":").last.map(String.init))
            let host = String(address.dropLast(port.count + 1))

            // Two clients of coturn's own allocate a relay each and send each other data through them.
            func relay(password: String) async throws -> (status: Int32, output: String) {
                try await ChildProcess.run(
                    "/usr/bin/turnutils_uclient", ["-y", "-n", "5", "-u", username, "-w", password, "-p", port, host],
                    timeout: .seconds(60))
            }
            /// The client's closing count, "tot_send_msgs=<sent>, tot_recv_msgs=<received>".
            func totals(_ output: String) -> (sent: Int, received: Int)? {
                guard let match = output.firstMatch(of: /tot_send_msgs=(\d+), tot_recv_msgs=(\d+)\n/) else { return nil }
                return (Int(match.1) ?? 0, Int(match.2) ?? 0)
            }
            let relayed = try await relay(password: password)
            #expect(relayed.status == 0, "\(relayed.output)")
            let counted = try #require(totals(relayed.output), "\(relayed.output)")
            #expect(counted.sent > 0 && counted.received == counted.sent, "\(relayed.output)")
            #expect(relayed.output.contains("Total lost packets 0"), "\(relayed.output)")
            // A password the API did not sign gets no relay.
            let forged = try await relay(password: "not-the-password")
            #expect(forged.output.contains("Cannot complete Allocation"), "\(forged.output)")
            #expect((totals(forged.output)?.received ?? 0) == 0, "\(forged.output)")

            // The secret is in coturn's settings file, the data directory's alone, not on its command line.
            let pidFile = directory.appendingPathComponent("coturn/turnserver.pid")
            turnPID = try #require(
                pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            let command = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(turnPID)/cmdline"))
            #expect(String(decoding: command, as: UTF8.self).contains("turnserver"))
            #expect(!String(decoding: command, as: UTF8.self).contains(info.turn_secret))
            var mode = stat()
            #expect(lstat(directory.appendingPathComponent("coturn/turnserver.conf").path, &mode) == 0)
            #expect(mode.st_mode & 0o077 == 0, "the settings file is its owner's alone")
        }
        // It stops with layer dev.
        #expect(turnPID > 0 && kill(turnPID, 0) != 0, "coturn (\(turnPID)) outlived layer dev")
    }

    @Test func adminCommandsManageAppsKeysAndTokens() async throws {
        try await withDev { directory, info in
            try await adminCommands(directory: directory, info: info)
            try await adminWebhookCommands(directory: directory, info: info)
        }
    }

    /// `layer admin webhooks` lists the app's webhooks, pauses one (its events wait), resumes it
    /// (they arrive) and replays what it was sent; the webhook verified and delivered to over
    /// plain http on loopback, as `layer dev` allows.
    func adminWebhookCommands(directory: URL, info: DevJSON) async throws {
        let common = ["--data-dir", directory.path]
        let app = info.app_id
        let appUUID = try #require(LayerID(parsing: app, as: .apps)).uuid.lowercased
        let minted = try await layer(["admin", "create-token", "--app", app] + common)
        let token = try #require(minted.split(separator: "\n").first { $0.hasPrefix("token: ") }?.dropFirst(7))
        let bearer = [("Authorization", "Bearer \(token)")]
        let client = TestClient(baseURL: info.base_url)
        let receiver = WebhookReceiver()
        try await WebPageServer.run(receiver.routes) { port in
            let registered = try await client.request(
                .POST, "/apps/\(appUUID)/webhooks", headers: bearer,
                json: [
                    "version": "1.0", "target_url": .string("http://127.0.0.1:\(port)/hook"), "events": ["message.sent"],
                    "secret": "cli-secret",
                ], accept: "application/vnd.layer.webhooks+json; version=1.0")
            #expect(registered.status == 201, "\(registered.text)")
            let webhook = try #require(registered.json?["id"]?.stringValue)
            var listed = ""
            for _ in 0..<100 {
                listed = try await layer(["admin", "webhooks", "list", "--app", app] + common)
                if listed.contains("active") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(listed.hasPrefix("\(webhook)  active  1.0  http://127.0.0.1:\(port)/hook  message.sent"), "\(listed)")

            let made = try await client.request(
                .POST, "/apps/\(appUUID)/conversations", headers: bearer, json: ["participants": ["ann", "ben"]])
            let conversation = try #require(made.json?["id"]?.stringValue?.split(separator: "/").last)
            func send(_ text: String) async throws {
                let sent = try await client.request(
                    .POST, "/apps/\(appUUID)/conversations/\(conversation)/messages", headers: bearer,
                    json: ["sender": ["name": "Bot"], "parts": [["mime_type": "text/plain", "body": .string(text)]]])
                #expect(sent.status == 201, "\(sent.text)")
            }
            try await send("first")
            #expect(try await receiver.waitFor(1).count == 1)

            let target = ["--app", app, "--webhook", webhook] + common
            let paused = try await layer(["admin", "webhooks", "pause"] + target)
            #expect(paused.contains("inactive (Paused by the operator"), "\(paused)")
            try await send("second")
            try await Task.sleep(for: .seconds(1))
            #expect(receiver.deliveries.withLock { $0.count } == 1, "a paused webhook gets nothing")
            #expect(try await layer(["admin", "webhooks", "resume"] + target).contains("  active  "))
            #expect(try await receiver.waitFor(2).count == 2, "resumed, it gets what it missed")

            #expect(try await layer(["admin", "webhooks", "replay"] + target) == "replaying 2 events")
            let all = try await receiver.waitFor(4)
            #expect(all.count == 4)
            let ids = all.map { $0.headers["layer-webhook-request-id"] }
            #expect(Array(ids[2...]) == Array(ids[..<2]))
            let badSince = try await ChildProcess.run(
                try ChildProcess.builtProduct("layer"), ["admin", "webhooks", "replay", "--since", "soon"] + target)
            #expect(badSince.status != 0)
        }
    }

    func adminCommands(directory: URL, info: DevJSON) async throws {
        let common = ["--data-dir", directory.path]

        let app = try await layer(["admin", "create-app", "--name", "Cli app", "--allowed-origin", "https://a.example"] + common)
        #expect(LayerID(parsing: app, as: .apps) != nil)

        // The app's web origins: set, replaced, refused when malformed, cleared.
        let origins = try await layer(
            ["admin", "allow-origins", "--app", app, "--origin", "https://chat.example.com", "--origin", "https://*.example.org"]
                + common)
        #expect(origins == "https://chat.example.com\nhttps://*.example.org")
        let malformed = try ChildProcess(
            try ChildProcess.builtProduct("layer"),
            ["admin", "allow-origins", "--app", app, "--origin", "chat.example.com"] + common)
        #expect(try await malformed.wait(timeout: .seconds(30)) != 0)
        #expect(malformed.output.contains("allowed_origins.0"), "\(malformed.output)")
        #expect(try await layer(["admin", "allow-origins", "--app", app] + common) == "no origins allowed for \(app)")

        let keyFile = directory.appendingPathComponent("cli-key.pem")
        try Data(try TestKeys.key(4).pemRepresentation.utf8).write(to: keyFile)
        let added = try await layer(["admin", "add-key", "--app", app, "--public-key", keyFile.path] + common)
        let kid = try #require(added.split(separator: "\n").first { $0.hasPrefix("kid: ") }?.dropFirst(5))
        let iss = try #require(added.split(separator: "\n").first { $0.hasPrefix("iss: ") }?.dropFirst(5))

        // A token signed with that key, via `layer token` with explicit key options, opens a session.
        let client = TestClient(baseURL: info.base_url)
        func signInWithTheKey() async throws -> TestResponse {
            let nonce = try #require(try await client.request(.POST, "/nonces").json?["nonce"]?.stringValue)
            let token = try await layer([
                "token", "--user", "zoe", "--nonce", nonce, "--key", keyFile.path, "--kid", String(kid), "--iss", String(iss),
            ])
            return try await client.request(.POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(app)])
        }
        #expect(try await signInWithTheKey().status == 201)

        // Disabled, its tokens are refused.
        _ = try await layer(["admin", "disable-key", "--app", app, "--provider", String(iss), "--key", String(kid)] + common)
        #expect(try await signInWithTheKey().errorReason == "eit_key_disabled")

        // A Server API token works on the Server API until revoked.
        let minted = try await layer(["admin", "create-token", "--app", app] + common)
        let tokenID = try #require(minted.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))
        let serverToken = try #require(minted.split(separator: "\n").first { $0.hasPrefix("token: ") }?.dropFirst(7))
        let appPath = "/apps/\(LayerID(parsing: app, as: .apps)!.uuid.lowercased)/users/zoe"
        let bearer = [("Authorization", "Bearer \(serverToken)")]
        #expect(try await client.request(.GET, appPath, headers: bearer).status == 200)
        // One process, one user directory: the sign-in is a user of the sync service's Server API
        // routes, and a user the Server API made is one of the auth service's.
        #expect(try await client.request(.GET, "\(appPath)/conversations", headers: bearer).json?.arrayValue == [])
        let yuriPath = appPath.replacingOccurrences(of: "/users/zoe", with: "/users/yuri")
        let made = try await client.request(.POST, "\(yuriPath)/identity", headers: bearer, json: ["display_name": "Yuri"])
        #expect(made.status == 201)
        #expect(try await client.request(.GET, yuriPath, headers: bearer).json?["identity"]?["display_name"] == "Yuri")
        let patch: JSONValue = [
            ["operation": "set", "property": "suspended", "value": true],
            ["operation": "add", "property": "blocks", "id": "layer:///identities/zoe"],
        ]
        let patched = try await client.request(.PATCH, yuriPath, headers: bearer, json: patch, contentType: MediaType.layerPatch)
        #expect(patched.status == 202)
        #expect(try await client.request(.GET, yuriPath, headers: bearer).json?["suspended"] == true)
        let blocks = try await client.request(.GET, "\(yuriPath)/blocks", headers: bearer).json?.arrayValue
        #expect(blocks?.compactMap { $0["user_id"]?.stringValue } == ["zoe"])
        _ = try await layer(["admin", "revoke-token", "--app", app, "--token", String(tokenID)] + common)
        #expect(try await client.request(.GET, appPath, headers: bearer).status == 401)

        // Deleted, the key's tokens are refused for that reason.
        _ = try await layer(["admin", "delete-key", "--app", app, "--provider", String(iss), "--key", String(kid)] + common)
        #expect(try await signInWithTheKey().errorReason == "eit_key_deleted")

        // A device certificate revoked from the command line is revoked (a second revocation finds nothing).
        let certified = try await client.request(.POST, "/certificates", json: ["csr": .string(try TestDevice().csrPEM())])
        let certificate = try #require(certified.json?["id"]?.stringValue)
        _ = try await layer(["admin", "revoke-certificate", "--certificate", certificate] + common)
        let again = try await client.request(
            .DELETE, "/admin/certificates/\(try #require(LayerID(parsing: certificate, as: .certificates)).uuid.lowercased)",
            headers: [("Authorization", "Bearer \(info.operator_token)")])
        #expect(again.status == 404)
    }
}
