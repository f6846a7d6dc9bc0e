import Foundation
import LayerModels
import LayerTesting
import Testing

/// What a WebSocket client can get wrong, at the upgrade and after it: each gets a clear error
/// (an HTTP error before the upgrade, an error response or a close code after), and the socket
/// stays usable wherever the protocol allows.
@Suite("WebSocket bad input")
struct WebSocketInputTests {
    @Test("An upgrade without a valid session is closed at once with 4401 authentication_required")
    func noSession() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            for query in ["", "?session_token=not-a-session"] {
                let socket = try await TestWebSocket.connect(url: "\(harness.webSocketBase)/websocket\(query)")
                let closed = try await socket.closed()
                #expect(closed.code == 4401, "query \(query)")
                #expect(closed.reason?.hasPrefix("authentication_required") == true)
            }
            // Without the upgrade, the same request says so in JSON, with a nonce to sign in with.
            let plain = try await harness.client.request(.GET, "/websocket")
            #expect(plain.status == 401)
            #expect(plain.errorID == "authentication_required")
            #expect(plain.json?["data"]?["nonce"]?.stringValue != nil)
        }
    }

    @Test("An upgrade without a layer-1.0, layer-2.0 or layer-3.0 subprotocol is closed with 4406 invalid_header")
    func subprotocol() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            for offered in [nil, "layer-1.1", "layer-4.0", "chat, superchat"] as [String?] {
                let socket = try await harness.socket(alice, subprotocol: offered, ready: false)
                let closed = try await socket.closed()
                #expect(closed.code == 4406, "offered \(offered ?? "nothing")")
                #expect(closed.reason?.hasPrefix("invalid_header") == true)
            }
            let plain = try await harness.client.request(.GET, "/websocket", headers: alice.auth)
            #expect(plain.status == 406)
            #expect(plain.json?["data"]?["header"] == "Sec-WebSocket-Protocol")
            // Offering several, one of them ours, is fine.
            let socket = try await harness.socket(alice, subprotocol: "layer-2.0, layer-3.0")
            #expect(try await socket.request("Counter.read")["success"] == .bool(true))
            await socket.close()
        }
    }

    @Test("A plain GET /websocket is 400 invalid_request; an anchor outside the changelog closes with 4422")
    func notAnUpgrade() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let plain = try await harness.client.request(
                .GET, "/websocket", headers: alice.auth + [("Sec-WebSocket-Protocol", "layer-3.0")])
            #expect(plain.status == 400)
            #expect(plain.errorID == "invalid_request")
            for anchor in ["5", "-1", "x"] {
                let socket = try await harness.socket(alice, query: "&anchor=\(anchor)", ready: false)
                let closed = try await socket.closed()
                #expect(closed.code == 4422, "anchor \(anchor)")
                #expect(closed.reason?.hasPrefix("invalid_property") == true)
            }
        }
    }

    @Test(
        "Malformed packets, unknown types and methods, bad request ids and binary frames get error responses; the socket stays usable"
    )
    func malformedPackets() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let socket = try await harness.socket(alice)
            func nextError() async throws -> JSONValue {
                let packet = try await socket.next { $0["type"] == "response" && $0["body"]?["success"] == .bool(false) }
                #expect(packet["body"]?["success"] == .bool(false))
                return packet["body"]?["data"] ?? .null
            }
            try await socket.sendText("{not json")
            #expect(try await nextError()["id"] == "invalid_request")
            try await socket.sendText("[1,2,3]")
            #expect(try await nextError()["id"] == "invalid_request")
            try await socket.send(["type": "gossip", "body": [:]])
            #expect(try await nextError()["data"]?["property"] == "type")
            try await socket.send(["type": "request", "body": ["request_id": "bad id!", "method": "Counter.read"]])
            #expect(try await nextError()["data"]?["property"] == "request_id")
            try await socket.send(["type": "request", "body": ["request_id": "r-x", "method": "Teleport.now"]])
            let unknown = try await socket.next { $0["type"] == "response" && $0["body"]?["request_id"] == "r-x" }
            #expect(unknown["body"]?["request_id"] == "r-x")
            #expect(unknown["body"]?["success"] == .bool(false))
            #expect(unknown["body"]?["data"]?["id"] == "invalid_endpoint")
            #expect(unknown["body"]?["data"]?["code"] == 106)
            try await socket.sendBinary([1, 2, 3])
            #expect(try await nextError()["id"] == "invalid_request")
            // Still open and answering.
            #expect(try await socket.request("Counter.read")["success"] == .bool(true))
            await socket.close()
        }
    }

    @Test("A frame over the size limit closes the socket with 1009")
    func oversizedFrame() async throws {
        var settings = quickPush
        settings.push.maxFrame = 4096
        try await SyncHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            let socket = try await harness.socket(alice)
            try await socket.sendText(String(repeating: "x", count: 10_000))
            let closed = try await socket.closed()
            #expect(closed.code == 1009)
        }
    }

    @Test("Requests about conversations the user is not in are refused without revealing them")
    func notAParticipant() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let mallory = try await harness.user("mallory")
            let conversation = try await alice.conversation(with: ["bob"])
            let socket = try await harness.socket(mallory)
            let sent = try await socket.request(
                "Message.create", objectID: conversation,
                data: ["parts": [["mime_type": "text/plain", "body": "hi"]]])
            #expect(sent["success"] == .bool(false))
            #expect(["not_found", "access_denied"].contains(sent["data"]?["id"]?.stringValue ?? ""))
            try await socket.send([
                "type": "signal",
                "body": [
                    "type": "typing_indicator", "object": ["id": .string(conversation)], "data": ["action": "started"],
                ],
            ])
            let typing = try await socket.next { $0["type"] == "response" && $0["body"]?["success"] == .bool(false) }
            #expect(typing["body"]?["data"]?["id"] == "not_found")
            let bad = try await socket.request("Message.create", objectID: "layer:///conversations/nope", data: ["parts": []])
            #expect(bad["data"]?["data"]?["property"] == "object_id")
            let missing = try await socket.request("Message.create", data: ["parts": []])
            #expect(missing["data"]?["id"] == "missing_property")
            let messages = try await alice.get("/\(path(conversation))/messages")
            #expect(messages.json?.arrayValue?.isEmpty == true, "nothing was stored")
            await socket.close()
        }
    }
}
