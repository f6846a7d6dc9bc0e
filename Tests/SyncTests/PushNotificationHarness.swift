import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// The suite with APNs and FCM played by ``FakePushServices``, on a database of its own (push jobs
/// are taken by every replica on a database, and other tests' replicas would send them to Apple).
struct PushNotificationHarness: Sendable {
    let harness: SyncHarness
    let services: FakePushServices

    static func run<T: Sendable>(
        configure: @Sendable (inout SyncSettings) -> Void = { _ in },
        _ body: @Sendable (PushNotificationHarness) async throws -> T
    ) async throws -> T {
        try await FakePushServices.run { services in
            let settings = Self.settings(services, configure: configure)
            let server = ServerSettings(database: try await TestDatabase.isolated())
            return try await SyncHarness.run(settings: settings, server: server) { harness in
                try await body(PushNotificationHarness(harness: harness, services: services))
            }
        }
    }

    /// Sync settings that send to `services`.
    static func settings(_ services: FakePushServices, configure: (inout SyncSettings) -> Void = { _ in }) -> SyncSettings {
        var settings = SyncSettings()
        settings.pushProviders.apnsURL = services.baseURL
        settings.pushProviders.apnsSandboxURL = services.baseURL
        settings.pushProviders.fcmURL = services.baseURL
        settings.pushProviders.fcmTokenURL = "\(services.baseURL)/token"
        settings.pushProviders.caFile = services.caFile
        settings.pushProviders.timeout = .seconds(5)
        configure(&settings)
        return settings
    }

    var operatorAuth: [(String, String)] { [("Authorization", "Bearer \(harness.fixture.operatorToken)")] }

    /// The operator's `PUT /admin/apps/<app>/push/<provider>`.
    func setProvider(_ provider: String, _ body: JSONValue) async throws -> TestResponse {
        try await harness.client.request(.PUT, "/admin/apps/\(harness.appID)/push/\(provider)", headers: operatorAuth, json: body)
    }

    /// Sets both providers, which must succeed.
    func setBothProviders() async throws {
        let apns = try await setProvider("apns", FakePushServices.apnsCredentials())
        #expect(apns.status == 200, "\(apns.text)")
        let fcm = try await setProvider("fcm", FakePushServices.fcmCredentials(tokenURL: "\(services.baseURL)/token"))
        #expect(fcm.status == 200, "\(fcm.text)")
    }

    func providers() async throws -> JSONValue? {
        try await harness.client.request(.GET, "/admin/apps/\(harness.appID)/push", headers: operatorAuth).json
    }

    /// A fresh APNs device token (32 bytes in hexadecimal).
    static func apnsToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    static func fcmToken() -> String { "fcm-\(UUID().uuidString):APA91b\(UUID().uuidString.prefix(12))" }

    /// Registers a token for one of `user`'s devices, which must be taken (202).
    @discardableResult
    func register(_ user: UserClient, type: String, token: String, device: String, bundle: String? = nil) async throws
        -> String
    {
        var body: [String: JSONValue] = ["token": .string(token), "type": .string(type), "device_id": .string(device)]
        if let bundle { body["apns_bundle_id"] = .string(bundle) }
        let response = try await user.post("/push_tokens", .object(body))
        #expect(response.status == 202, "\(response.text)")
        return token
    }

    /// A WebSocket of `user`, opened with the session the user's token was registered with.
    func socket(_ user: UserClient) async throws -> TestWebSocket {
        let base = harness.client.baseURL.replacingOccurrences(of: "http://", with: "ws://")
        return try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(user.token)")
    }

    /// A message with a `notification`.
    func send(_ text: String, from user: UserClient, to conversation: String, notification: JSONValue?) async throws
        -> JSONValue
    {
        var body = textMessage(text)
        if let notification { body["notification"] = notification }
        let response = try await user.post("/\(path(conversation))/messages", .object(body))
        #expect(response.status == 201, "\(response.text)")
        return response.json ?? .null
    }

    /// The push rows still waiting in the outbox.
    func pendingJobs() async throws -> Int {
        let rows = try await harness.fixture.server.postgres.query("SELECT count(*)::int8 FROM sync.push_jobs")
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    func tokenCount(of user: String) async throws -> Int {
        let rows = try await harness.fixture.server.postgres.query(
            "SELECT count(*)::int8 FROM sync.push_tokens WHERE user_id = \(user)")
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
