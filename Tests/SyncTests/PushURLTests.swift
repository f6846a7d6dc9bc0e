import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// What is pushed is rendered once for many devices, yet the URLs in it (`url`, the signed
/// `download_url`) belong to each device: built on the base of its own connection, or on
/// `LAYER_PUBLIC_URL`, and never on a base another client chose with its `Host` header.
@Suite("URLs in pushed data")
struct PushURLTests {
    /// Every string of `value` that is an absolute HTTP URL, wherever it sits.
    static func urls(in value: JSONValue?) -> [String] {
        switch value {
        case .string(let text): text.hasPrefix("http://") || text.hasPrefix("https://") ? [text] : []
        case .array(let items): items.flatMap { urls(in: $0) }
        case .object(let fields): fields.values.flatMap { urls(in: $0) }
        default: []
        }
    }

    /// The URLs of the next event of `stream` named `name`.
    static func urls(of name: String, on stream: TestEventStream) async throws -> [String] {
        let event = try await stream.next(timeout: .seconds(30)) { $0.event == name }
        return urls(in: event.json)
    }

    /// The URLs of the next packet of `socket` that `predicate` picks.
    static func urls(on socket: TestWebSocket, _ predicate: (JSONValue) -> Bool) async throws -> [String] {
        urls(in: try await socket.next(timeout: .seconds(30), where: predicate))
    }

    /// Alice and Bob share a conversation; Alice listens with `aliceHost` as her `Host`, Bob with
    /// `bobHost`, and each also has a WebSocket on the server's own address. Alice's socket comes
    /// (presence), she sends a picture (a signed `download_url`) and starts typing. Returns the
    /// URLs each device received, by device.
    static func pushedURLs(
        _ harness: SyncHarness, aliceHost: String, bobHost: String, aliceForwarded: [String: String] = [:]
    ) async throws -> [String: [String]] {
        let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
        let content = try await alice.uploadContent(Array(repeating: 7, count: 4096), type: "image/png")
        let aliceEvents = try await harness.events(alice, headers: aliceForwarded.merging(["Host": aliceHost]) { $1 })
        let bobEvents = try await harness.events(bob, headers: ["Host": bobHost])
        let bobSocket = try await harness.socket(bob)
        let aliceSocket = try await harness.socket(alice)

        let sent = try await alice.post(
            "/\(path(conversation))/messages",
            [
                "parts": [
                    ["mime_type": "text/plain", "body": "a picture"],
                    ["mime_type": "image/png", "content": ["id": .string(content), "size": 4096]],
                ]
            ])
        #expect(sent.status == 201, "\(sent.text)")
        try await aliceSocket.send([
            "type": "signal",
            "body": ["type": "typing_indicator", "object": ["id": .string(conversation)], "data": ["action": "started"]],
        ])

        var received: [String: [String]] = [:]
        received["alice events"] = try await urls(of: "new_message", on: aliceEvents)
        received["bob events"] =
            try await urls(of: "presence", on: bobEvents) + urls(of: "new_message", on: bobEvents)
            + urls(of: "typing_indicator", on: bobEvents)
        received["bob socket"] =
            try await urls(on: bobSocket) { $0["body"]?["object"]?["type"] == "Identity" }
            + urls(on: bobSocket) { $0["body"]?["operation"] == "create" && $0["body"]?["object"]?["type"] == "Message" }
            + urls(on: bobSocket) { $0["body"]?["type"] == "typing_indicator" }
        aliceEvents.close()
        bobEvents.close()
        await aliceSocket.close()
        await bobSocket.close()
        return received
    }

    /// Checks that every URL each device received begins with `bases[device]`, and that the
    /// message's signed download link was among them.
    static func expect(_ received: [String: [String]], bases: [String: String]) {
        for (device, urls) in received {
            let base = bases[device]!
            #expect(!urls.isEmpty, "\(device) received no URL")
            #expect(urls.contains { $0.contains("/download?") }, "\(device) received no download link: \(urls)")
            let foreign = urls.filter { !$0.hasPrefix(base + "/") }
            #expect(foreign.isEmpty, "\(device) (base \(base)) received URLs of another base: \(foreign)")
        }
    }

    @Test("Each device's pushed URLs begin with its own connection's base, whatever Host another client sent")
    func eachDeviceGetsItsOwnBase() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let received = try await Self.pushedURLs(harness, aliceHost: "attacker.example", bobHost: "bob.example:8443")
            Self.expect(
                received,
                bases: [
                    "alice events": "http://attacker.example", "bob events": "http://bob.example:8443",
                    "bob socket": harness.fixture.server.baseURL,
                ])
        }
    }

    @Test("With LAYER_PUBLIC_URL set, every device's pushed URLs begin with it, whatever Host it sent")
    func configuredPublicURL() async throws {
        let server = ServerSettings(publicBaseURL: "https://chat.example")
        try await SyncHarness.run(settings: quickPush, server: server) { harness in
            let received = try await Self.pushedURLs(harness, aliceHost: "attacker.example", bobHost: "bob.example:8443")
            Self.expect(
                received,
                bases: [
                    "alice events": "https://chat.example", "bob events": "https://chat.example",
                    "bob socket": "https://chat.example",
                ])
        }
    }

    /// What the edge adds to every request it passes on (deploy/nginx/nginx.conf).
    static let forwarded = ["X-Forwarded-Proto": "https", "X-Forwarded-Host": "chat.example.com"]

    @Test("Behind a trusted edge, URLs are built on the scheme and host it forwarded, without LAYER_PUBLIC_URL")
    func trustedEdgeForwardsSchemeAndHost() async throws {
        var server = ServerSettings()
        server.trustedProxies = ["127.0.0.0/8"]
        try await SyncHarness.run(settings: quickPush, server: server) { harness in
            let received = try await Self.pushedURLs(
                harness, aliceHost: "sync:8082", bobHost: "bob.example:8443", aliceForwarded: Self.forwarded)
            Self.expect(
                received,
                bases: [
                    "alice events": "https://chat.example.com", "bob events": "http://bob.example:8443",
                    "bob socket": harness.fixture.server.baseURL,
                ])
            // Responses too: the conversation's own url, and the discovery links of `GET /`.
            let alice = try await harness.user("alice")
            let headers = alice.auth + Self.forwarded.map { ($0.key, $0.value) }
            let listed = try await harness.client.request(.GET, "/conversations", headers: headers)
            let urls = Self.urls(in: listed.json)
            #expect(!urls.isEmpty && urls.allSatisfy { $0.hasPrefix("https://chat.example.com/") }, "\(urls)")
            let root = try await harness.client.request(.GET, "/", headers: Self.forwarded.map { ($0.key, $0.value) })
            #expect(root.headers.first(name: "Link")?.contains("<https://chat.example.com/conversations>") == true)
            // Even from the edge, only a scheme and a host name are taken.
            let odd = try await harness.client.request(
                .GET, "/", headers: [("X-Forwarded-Proto", "javascript"), ("X-Forwarded-Host", "evil.example/x?")])
            #expect(odd.headers.first(name: "Link")?.contains("<\(harness.fixture.server.baseURL)/conversations>") == true)
        }
    }

    @Test("From a peer that is not a trusted proxy, X-Forwarded-Proto and X-Forwarded-Host change nothing")
    func untrustedForwardedHeadersIgnored() async throws {
        var server = ServerSettings()
        server.trustedProxies = ["10.0.0.0/8", "fd00::/8"]
        try await SyncHarness.run(settings: quickPush, server: server) { harness in
            let received = try await Self.pushedURLs(
                harness, aliceHost: "alice.example", bobHost: "bob.example:8443", aliceForwarded: Self.forwarded)
            Self.expect(
                received,
                bases: [
                    "alice events": "http://alice.example", "bob events": "http://bob.example:8443",
                    "bob socket": harness.fixture.server.baseURL,
                ])
            let root = try await harness.client.request(.GET, "/", headers: Self.forwarded.map { ($0.key, $0.value) })
            #expect(root.headers.first(name: "Link")?.contains("<\(harness.fixture.server.baseURL)/conversations>") == true)
        }
    }
}
