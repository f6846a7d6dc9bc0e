import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Logging
import PostgresNIO
import Testing

/// Push settings quick enough for tests: short stalls, typing steps and keep-alives.
let quickPush = SyncSettings(
    push: PushSettings(
        buffer: 16, heartbeat: .seconds(30), keepAlive: .milliseconds(300), stallTimeout: .seconds(2),
        sessionCheck: .milliseconds(300), typingTimeout: .milliseconds(400)))

extension SyncHarness {
    var webSocketBase: String { fixture.server.baseURL.replacingOccurrences(of: "http://", with: "ws://") }

    /// Opens a WebSocket as `user` (with the session token in the query). With `ready`, it
    /// first makes one request round trip: the WebSocket client can miss frames that arrive in
    /// the instant after the upgrade, before it reads, so tests start once it surely reads.
    func socket(
        _ user: UserClient, query: String = "", subprotocol: String? = "layer-3.0", ready: Bool = true
    ) async throws -> TestWebSocket {
        let socket = try await TestWebSocket.connect(
            url: "\(webSocketBase)/websocket?session_token=\(user.token)\(query)", subprotocol: subprotocol)
        if ready { try await socket.ready() }
        return socket
    }

    /// Opens the event stream as `user`.
    func events(_ user: UserClient, headers: [String: String] = [:], query: String = "") async throws -> TestEventStream {
        try await TestEventStream.connect(
            url: "\(fixture.server.baseURL)/events?session_token=\(user.token)\(query)", headers: headers)
    }

    /// Runs `body` with a second sync replica: its own listener and process state, the same
    /// database, calling the same auth service.
    func withReplica<T: Sendable>(
        settings: SyncSettings = SyncSettings(), _ body: @Sendable (_ baseURL: String) async throws -> T
    ) async throws -> T {
        var settings = settings
        settings.authURL = fixture.server.baseURL
        return try await LiveServer.run([SyncService.configured(settings)], settings: fixture.server.settings) { replica in
            try await body(replica.baseURL)
        }
    }
}

extension TestWebSocket {
    /// Returns once a request made a round trip: the client can miss frames that arrive in the
    /// instant after the upgrade, before it reads, and a frame in that instant, either way, may
    /// be lost, so it asks again until one is answered.
    func ready() async throws {
        for attempt in 1...10 {
            do {
                _ = try await request("Counter.read", timeout: .seconds(3))
                return
            } catch is PushTimeout where attempt < 10 {
                continue
            }
        }
    }

    /// The next `change` packet whose object has this type (skipping others).
    func change(_ operation: String, _ type: String, timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await next(timeout: timeout) { packet in
            packet["type"]?.stringValue == "change" && packet["body"]?["operation"]?.stringValue == operation
                && packet["body"]?["object"]?["type"]?.stringValue == type
        }
    }

    /// Fails unless nothing but `allowed` packets arrive within `window`.
    func expectSilence(for window: Duration = .milliseconds(300), sourceLocation: SourceLocation = #_sourceLocation) async throws
    {
        do {
            let packet = try await next(timeout: window)
            Issue.record("expected no packet, got \(packet)", sourceLocation: sourceLocation)
        } catch is PushTimeout {}
    }
}
