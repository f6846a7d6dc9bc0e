import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOHTTP1
import Synchronization
import Testing

/// The webhooks API: an app's backend registers a receiver, which the suite verifies with a
/// challenge over real HTTP; the app lists, reads, activates, deactivates and deletes its webhooks.
@Suite("Webhooks: registration and verification")
struct WebhookTests {
    /// A receiver on this machine: answers verification challenges as `answer` says, and keeps
    /// the requests it got.
    final class Receiver: Sendable {
        enum Answer: Sendable { case echo, notFound, wrongBody }
        let answer = Mutex(Answer.echo)
        let requests = Mutex<[(path: String, userAgent: String?)]>([])

        func routes(_ router: Router<BasicRequestContext>) {
            router.get("hook") { request, _ -> Response in
                self.requests.withLock {
                    $0.append((request.uri.description, request.headers[.userAgent]))
                }
                let challenge = request.uri.queryParameters["verification_challenge"].map(String.init) ?? ""
                switch self.answer.withLock({ $0 }) {
                case .echo: return Response(status: .ok, body: .init(byteBuffer: .init(string: challenge)))
                case .notFound: return Response(status: .notFound)
                case .wrongBody: return Response(status: .ok, body: .init(byteBuffer: .init(string: "no")))
                }
            }
        }
    }

    static func settings(privateTargets: Bool = true) -> SyncSettings {
        var settings = SyncSettings()
        settings.webhookPrivateTargets = privateTargets
        return settings
    }

    static let accept = "application/vnd.layer.webhooks+json; version=1.0"

    static func body(_ target: String, version: String = "1.0", events: [String] = ["message.sent"]) -> JSONValue {
        .object(fields(target, version: version, events: events))
    }

    static func fields(_ target: String, version: String = "1.0", events: [String] = ["message.sent"]) -> [String: JSONValue] {
        [
            "version": .string(version), "target_url": .string(target), "events": .array(events.map(JSONValue.string)),
            "secret": "s3cret-value", "config": ["team": "blue"],
        ]
    }

    /// Polls the webhook until its status is not `unverified`.
    static func settled(_ api: ServerClient, _ path: String) async throws -> JSONValue? {
        for _ in 0..<200 {
            let webhook = try await api.client.request(.GET, path, headers: api.auth, accept: accept).json
            if webhook?["status"] != "unverified" { return webhook }
            try await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    @Test("A registered webhook is unverified, then active once its receiver echoes the challenge")
    func registerAndVerify() async throws {
        let receiver = Receiver()
        try await WebPageServer.run(receiver.routes) { port in
            try await SyncHarness.run(settings: Self.settings()) { harness in
                let api = try await harness.server()
                let target = "http://127.0.0.1:\(port)/hook"
                let made = try await api.client.request(
                    .POST, "/apps/\(api.appID)/webhooks", headers: api.auth, json: Self.body(target), accept: Self.accept)
                #expect(made.status == 201, "\(made.text)")
                let webhook = try #require(made.json)
                let id = try #require(webhook["id"]?.stringValue)
                #expect(id.hasPrefix("layer:///apps/\(api.appID)/webhooks/"))
                let uuid = String(id.split(separator: "/").last!)
                #expect(webhook["url"]?.stringValue?.hasSuffix("/apps/\(api.appID)/webhooks/\(uuid)") == true)
                #expect(webhook["status"] == "unverified")
                #expect(webhook["version"] == "1.0")
                #expect(webhook["target_url"]?.stringValue == target)
                #expect(webhook["events"] == ["message.sent"])
                #expect(webhook["config"] == ["team": "blue"])
                #expect(webhook["secret"] == nil, "the secret is never shown")
                #expect(webhook["created_at"]?.stringValue != nil)

                let path = "/apps/\(api.appID)/webhooks/\(uuid)"
                let settled = try await Self.settled(api, path)
                #expect(settled?["status"] == "active")
                #expect(settled?["status_reason"] == nil)
                let challenges = receiver.requests.withLock { $0 }
                #expect(challenges.count == 1)
                #expect(challenges.first?.path.contains("verification_challenge=") == true)
                #expect(challenges.first?.userAgent?.hasPrefix("layer-webhooks") == true)

                // The id as a URI works as well as the UUID; the list has it, the Server API's media type is taken.
                let encoded = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let byURI = try await api.client.request(
                    .GET, "/apps/\(api.appID)/webhooks/\(encoded)", headers: api.auth, accept: Self.accept)
                #expect(byURI.json?["id"]?.stringValue == id)
                let list = try await api.client.request(
                    .GET, "/apps/\(api.appID)/webhooks", headers: api.auth, accept: "application/vnd.layer+json; version=3.0")
                #expect(list.status == 200)
                #expect(list.json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [id])
            }
        }
    }

    @Test("A receiver that does not echo the challenge leaves the webhook inactive with the reason; activate tries again")
    func failedVerificationAndActivate() async throws {
        let receiver = Receiver()
        receiver.answer.withLock { $0 = .notFound }
        try await WebPageServer.run(receiver.routes) { port in
            try await SyncHarness.run(settings: Self.settings()) { harness in
                let api = try await harness.server()
                let made = try await api.client.request(
                    .POST, "/apps/\(api.appID)/webhooks", headers: api.auth,
                    json: Self.body("http://127.0.0.1:\(port)/hook", version: "2.0", events: ["Message.created"]),
                    accept: "application/vnd.layer.webhooks+json; version=2.0")
                #expect(made.status == 201, "\(made.text)")
                let uuid = try #require(made.json?["id"]?.stringValue?.split(separator: "/").last.map(String.init))
                let path = "/apps/\(api.appID)/webhooks/\(uuid)"
                let failed = try await Self.settled(api, path)
                #expect(failed?["status"] == "inactive")
                #expect(failed?["status_reason"] == "Verification failed due to unexpected response status: 404 Not Found")

                receiver.answer.withLock { $0 = .wrongBody }
                let again = try await api.client.request(.POST, "\(path)/activate", headers: api.auth, accept: Self.accept)
                #expect(again.status == 200)
                #expect(again.json?["status"] == "unverified")
                #expect(try await Self.settled(api, path)?["status"] == "inactive")

                receiver.answer.withLock { $0 = .echo }
                #expect(
                    try await api.client.request(.POST, "\(path)/activate", headers: api.auth, accept: Self.accept).status == 200)
                #expect(try await Self.settled(api, path)?["status"] == "active")

                let stopped = try await api.client.request(.POST, "\(path)/deactivate", headers: api.auth, accept: Self.accept)
                #expect(stopped.status == 200)
                #expect(stopped.json?["status"] == "inactive")
                #expect(stopped.json?["status_reason"] == "Deactivated by User")

                #expect(try await api.client.request(.DELETE, path, headers: api.auth, accept: Self.accept).status == 204)
                #expect(try await api.client.request(.GET, path, headers: api.auth, accept: Self.accept).status == 404)
                #expect(try await api.client.request(.DELETE, path, headers: api.auth, accept: Self.accept).status == 404)
            }
        }
    }

    /// This machine's name, when it resolves to a loopback or private address (as `/etc/hosts`
    /// usually has it): a name that passes registration, which only the lookup unmasks.
    static let privateName: String? = {
        let name = ProcessInfo.processInfo.hostName
        var list: UnsafeMutablePointer<addrinfo>?
        guard !name.isEmpty, name != "localhost", getaddrinfo(name, nil, nil, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        guard first.pointee.ai_family == AF_INET else { return nil }
        let address = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
        let leading = UInt32(bigEndian: address) >> 24
        return [10, 127].contains(leading) ? name : nil
    }()

    @Test(
        "Without private targets, a target whose name resolves to a loopback or private address is refused when it is called",
        .enabled(if: privateName != nil, "this machine's name does not resolve to a loopback or 10/8 address"))
    func nameResolvingToAPrivateAddress() async throws {
        try await SyncHarness.run(settings: Self.settings(privateTargets: false)) { harness in
            let api = try await harness.server()
            let name = try #require(Self.privateName)
            let made = try await api.client.request(
                .POST, "/apps/\(api.appID)/webhooks", headers: api.auth, json: Self.body("https://\(name):9/hook"),
                accept: Self.accept)
            #expect(made.status == 201, "a name is not refused for what it may resolve to later")
            let uuid = try #require(made.json?["id"]?.stringValue?.split(separator: "/").last.map(String.init))
            let refused = try await Self.settled(api, "/apps/\(api.appID)/webhooks/\(uuid)")
            #expect(refused?["status"] == "inactive")
            let reason = refused?["status_reason"]?.stringValue ?? ""
            #expect(reason.contains("resolves to") && reason.contains("loopback or private address"), "\(reason)")
        }
    }

    @Test("Bad registrations are refused naming the field, and store nothing")
    func badRegistrations() async throws {
        try await SyncHarness.run(settings: Self.settings(privateTargets: false)) { harness in
            let api = try await harness.server()
            let path = "/apps/\(api.appID)/webhooks"
            func post(_ body: JSONValue, accept: String = Self.accept) async throws -> TestResponse {
                try await api.client.request(.POST, path, headers: api.auth, json: body, accept: accept)
            }
            let good = Self.fields("https://hooks.example.com/layer")
            var missingVersion = good
            missingVersion["version"] = nil
            let missing = try await post(.object(missingVersion))
            #expect(missing.status == 422)
            #expect(missing.errorID == "missing_property")
            #expect(missing.errorProperty == "version")
            for (field, value, property) in [
                ("version", JSONValue.string("4.0"), "version"),
                ("target_url", "http://hooks.example.com/layer", "target_url"),
                ("target_url", "https://127.0.0.1/hook", "target_url"),
                ("target_url", "https://localhost:8443/hook", "target_url"),
                ("target_url", "not a url", "target_url"),
                ("events", ["message.sent", "Message.created"], "events.1"),
                ("events", [], "events"),
                ("secret", "", "secret"),
                ("config", ["nested": ["a": "b"]], "config.nested"),
            ] {
                var body = good
                body[field] = value
                let refused = try await post(.object(body))
                #expect(refused.status == 422, "\(field): \(refused.text)")
                #expect(refused.errorProperty == property, "\(field): \(refused.text)")
            }
            #expect(try await post(.object(good), accept: "application/vnd.layer.webhooks+json; version=4.0").status == 406)
            #expect(try await post(.object(good), accept: "application/json").status == 406)
            let list = try await api.client.request(.GET, path, headers: api.auth, accept: Self.accept)
            #expect(list.json?.arrayValue == [], "nothing was stored")
            // An https target on the internet is taken (and fails its challenge later, unreachable here).
            #expect(try await post(.object(good)).status == 201)
            #expect(try await api.client.request(.GET, path, accept: Self.accept).status == 401)
        }
    }

    @Test("An app sees and changes only its own webhooks")
    func appsAreApart() async throws {
        try await SyncHarness.run(settings: Self.settings()) { harness in
            let api = try await harness.server()
            let made = try await api.client.request(
                .POST, "/apps/\(api.appID)/webhooks", headers: api.auth, json: Self.body("https://hooks.example.com/a"),
                accept: Self.accept)
            let uuid = try #require(made.json?["id"]?.stringValue?.split(separator: "/").last.map(String.init))
            let other = try await harness.fixture.registerApp(keyIndex: 1)
            let otherToken = try await harness.fixture.serverAPIToken(app: other)
            let otherAPI = ServerClient(appID: other.id.lowercased, token: otherToken, client: harness.client)
            let base = "/apps/\(otherAPI.appID)/webhooks"
            #expect(
                try await otherAPI.client.request(.GET, base, headers: otherAPI.auth, accept: Self.accept).json?.arrayValue == [])
            for (method, path) in [
                (HTTPMethod.GET, "\(base)/\(uuid)"), (.POST, "\(base)/\(uuid)/activate"), (.POST, "\(base)/\(uuid)/deactivate"),
                (.DELETE, "\(base)/\(uuid)"),
            ] {
                #expect(
                    try await otherAPI.client.request(method, path, headers: otherAPI.auth, accept: Self.accept).status == 404)
            }
            // Another app's token on this app's path is refused outright.
            let crossed = try await otherAPI.client.request(
                .GET, "/apps/\(api.appID)/webhooks/\(uuid)", headers: otherAPI.auth, accept: Self.accept)
            #expect(crossed.status == 401)
            #expect(
                try await api.client.request(.GET, "/apps/\(api.appID)/webhooks/\(uuid)", headers: api.auth, accept: Self.accept)
                    .json?["status"] != nil)
        }
    }
}
