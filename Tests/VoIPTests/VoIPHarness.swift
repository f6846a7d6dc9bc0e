import Foundation
import LayerModels
import LayerServer
import LayerTesting
import LayerVoIP
import NIOHTTP1
import Testing

/// The auth, sync and VoIP services on one listener (as `layer dev` runs them), with an app of
/// their own; a test signs users in, connects their devices and places calls as them.
struct VoIPHarness: Sendable {
    let fixture: AuthFixture

    static func run<T: Sendable>(
        // Tests place many calls as one user, faster than anyone would: the allowance is theirs to set.
        settings: VoIPSettings = VoIPSettings(stunPort: 0, turnSecret: "test-turn-secret", callsPerMinute: 1000),
        _ body: @Sendable (VoIPHarness) async throws -> T
    ) async throws -> T {
        try await AuthFixture.run(withVoIP: settings) { fixture in try await body(VoIPHarness(fixture: fixture)) }
    }

    var client: TestClient { fixture.client }

    /// Signs `name` in.
    func user(_ name: String, app: AuthFixture.TestApp? = nil) async throws -> Party {
        Party(name: name, token: try await fixture.session(user: name, app: app), harness: self)
    }

    /// A request of the app's backend through the Server API, to `path` under `/apps/<app>`.
    func serverAPI(_ method: HTTPMethod, _ path: String, json: JSONValue? = nil) async throws -> TestResponse {
        let url = "/apps/\(fixture.app.id.lowercased)\(path)"
        let auth = [("Authorization", "Bearer \(try await fixture.serverAPIToken())")]
        guard let json else { return try await client.request(method, url, headers: auth) }
        let type = method == .PATCH ? MediaType.layerPatch : MediaType.json
        return try await client.request(method, url, headers: auth, json: json, contentType: type)
    }

    /// Suspends `party` (their sessions end and they get no new ones).
    func suspend(_ party: Party) async throws {
        let response = try await serverAPI(
            .PATCH, "/users/\(party.name)", json: [["operation": "set", "property": "suspended", "value": true]])
        #expect(response.status == 202 || response.status == 204, "\(response.text)")
    }
}

/// A signed-in user: their requests and their devices.
struct Party: Sendable {
    let name: String
    let token: String
    let harness: VoIPHarness

    var identity: String { LayerID.identity(userID: name) }
    var headers: [(String, String)] { AuthFixture.sessionHeader(token) }

    func get(_ path: String) async throws -> TestResponse {
        try await harness.client.request(.GET, path, headers: headers)
    }

    /// A POST with a JSON body, or with none.
    func post(_ path: String, _ json: JSONValue? = nil) async throws -> TestResponse {
        guard let json else { return try await harness.client.request(.POST, path, headers: headers) }
        return try await harness.client.request(.POST, path, headers: headers, json: json)
    }

    /// A device of this user with push open, registered before it returns.
    func device() async throws -> TestWebSocket {
        let base = harness.fixture.server.baseURL.replacingOccurrences(of: "http://", with: "ws://")
        let socket = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(token)")
        let answer = try await socket.request("Counter.read")
        #expect(answer["success"] == .bool(true))
        return socket
    }

    /// `POST /calls` to `callee`; the response.
    func call(
        _ callee: Party, token: String = "caller-token-1", candidates: [JSONValue] = [hostCandidate], media: String = "audio"
    ) async throws -> TestResponse {
        try await post(
            "/calls",
            [
                "callee": .string(callee.identity), "caller_token": .string(token), "candidates": .array(candidates),
                "media": .string(media),
            ])
    }

    /// Blocks `other` for this user, as the app's backend does; or lifts the block.
    func block(_ other: Party, lift: Bool = false) async throws {
        let response =
            lift
            ? try await harness.serverAPI(.DELETE, "/users/\(name)/blocks/\(other.name)")
            : try await harness.serverAPI(.POST, "/users/\(name)/blocks", json: ["user_id": .string(other.name)])
        #expect(response.status == 204, "\(response.text)")
    }

    /// Places a call that must succeed; its id.
    func placeCall(to callee: Party) async throws -> String {
        let response = try await call(callee)
        #expect(response.status == 201, "\(response.text)")
        return try #require(response.json?["id"]?.stringValue)
    }

    func answer(_ call: String, device: String = "phone", token: String = "callee-token-1") async throws -> TestResponse {
        try await post(
            "\(path(call))/answer",
            ["device_id": .string(device), "callee_token": .string(token), "candidates": [relayCandidate]])
    }

    func path(_ call: String) -> String { "/calls/" + call.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)! }
}

let hostCandidate: JSONValue = ["type": "host", "ip": "192.168.1.20", "port": 50000, "transport": "udp"]
let relayCandidate: JSONValue = ["type": "relay", "ip": "2001:db8::7", "port": 3478, "transport": "udp"]

extension TestWebSocket {
    /// The next call signal of `type` (`call.ringing`, `call.answered`, …).
    func callSignal(_ type: String, timeout: Duration = .seconds(10)) async throws -> JSONValue {
        let packet = try await next(timeout: timeout) {
            $0["type"]?.stringValue == "signal" && $0["body"]?["type"]?.stringValue == type
        }
        return packet["body"] ?? .null
    }
}
