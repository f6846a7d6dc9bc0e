import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

extension SyncHarness {
    /// Opens a WebSocket as `user` on another replica.
    fileprivate func socket(_ user: UserClient, on baseURL: String) async throws -> TestWebSocket {
        let base = baseURL.replacingOccurrences(of: "http://", with: "ws://")
        return try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(user.token)")
    }

    /// Opens the event stream as `user` on another replica.
    fileprivate func events(_ user: UserClient, on baseURL: String, headers: [String: String] = [:]) async throws
        -> TestEventStream
    {
        try await TestEventStream.connect(url: "\(baseURL)/events?session_token=\(user.token)", headers: headers)
    }

    /// `POST /internal/v1/signals` on the main replica.
    fileprivate func signal(_ body: JSONValue, token: String?) async throws -> TestResponse {
        let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        return try await client.request(.POST, "/internal/v1/signals", headers: headers, json: body)
    }
}

extension TestWebSocket {
    /// Returns once the server has registered this socket as a device: requests are read only
    /// after that.
    fileprivate func registered() async throws {
        let answer = try await request("Counter.read")
        #expect(answer["success"] == .bool(true))
    }

    /// The next `count` created messages' ids.
    fileprivate func createdMessages(_ count: Int) async throws -> [String] {
        var ids: [String] = []
        for _ in 0..<count {
            let packet = try await change("create", "Message")
            ids.append(packet["body"]?["object"]?["id"]?.stringValue ?? "?")
        }
        return ids
    }

    /// Fails if a packet matching `predicate` arrives within `window`; other packets are dropped.
    fileprivate func expectNone(
        for window: Duration = .milliseconds(600), _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        where predicate: (JSONValue) -> Bool
    ) async throws {
        do {
            let packet = try await next(timeout: window, where: predicate)
            Issue.record("expected no \(what), got \(packet)", sourceLocation: sourceLocation)
        } catch is PushTimeout {}
    }

    /// The next typing indicator signal.
    fileprivate func typing(timeout: Duration = .seconds(5)) async throws -> JSONValue {
        try await next(timeout: timeout) {
            $0["type"]?.stringValue == "signal" && $0["body"]?["type"]?.stringValue == "typing_indicator"
        }
    }

    /// The next presence update of `user`'s identity.
    fileprivate func presence(of user: String, timeout: Duration = .seconds(5)) async throws -> JSONValue {
        try await next(timeout: timeout) {
            $0["type"]?.stringValue == "change" && $0["body"]?["operation"]?.stringValue == "update"
                && $0["body"]?["object"]?["id"]?.stringValue == LayerID.identity(userID: user)
        }
    }
}

/// The value a Layer-Patch array sets `property` to.
private func patchValue(_ patch: JSONValue?, _ property: String) -> JSONValue? {
    patch?.arrayValue?.first { $0["property"]?.stringValue == property && $0["operation"]?.stringValue == "set" }?["value"]
}

@Suite("Push across replicas")
struct ReplicaTests {
    @Test("A message written through either replica reaches the user's sockets on both, each once and in order")
    func messagesCrossReplicas() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            try await harness.withReplica(settings: quickPush) { replica in
                let bobOnA = try await harness.socket(bob)
                let bobOnB = try await harness.socket(bob, on: replica)
                let aliceOnB = try await harness.socket(alice, on: replica)
                for socket in [bobOnA, bobOnB, aliceOnB] { try await socket.registered() }

                let replicaClient = TestClient(baseURL: replica)
                var sent: [String] = []
                for index in 0..<6 {
                    if index.isMultiple(of: 2) {
                        sent.append(try #require(try await alice.send("via A \(index)", to: conversation)["id"]?.stringValue))
                    } else {
                        let response = try await replicaClient.request(
                            .POST, "/\(path(conversation))/messages", headers: alice.auth,
                            json: ["parts": [["mime_type": "text/plain", "body": .string("via B \(index)")]]])
                        #expect(response.status == 201, "\(response.text)")
                        sent.append(try #require(response.json?["id"]?.stringValue))
                    }
                }

                for (name, socket) in [("bob on A", bobOnA), ("bob on B", bobOnB), ("alice on B", aliceOnB)] {
                    #expect(try await socket.createdMessages(sent.count) == sent, "\(name): every message, in order")
                    try await socket.expectNone("second copy on \(name)") {
                        $0["type"]?.stringValue == "change" && $0["body"]?["object"]?["type"]?.stringValue == "Message"
                            && $0["body"]?["operation"]?.stringValue == "create"
                    }
                }
                for socket in [bobOnA, bobOnB, aliceOnB] { await socket.close() }
            }
        }
    }

    @Test("An event stream on one replica resumes with Last-Event-ID after changes written through the other")
    func eventStreamResumesOnAnotherReplica() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            try await harness.withReplica(settings: quickPush) { replica in
                let first = try await harness.events(bob, on: replica)
                #expect(first.status == 200)
                let one = try #require(try await alice.send("one", to: conversation)["id"]?.stringValue)
                let seen = try await first.next { $0.event == "new_message" }
                #expect(seen.json?["message_id"]?.stringValue == one)
                let last = try #require(seen.id.flatMap { Int($0) })
                first.close()

                var missed: [String] = []
                for text in ["two", "three"] {
                    missed.append(try #require(try await alice.send(text, to: conversation)["id"]?.stringValue))
                }
                let again = try await harness.events(bob, on: replica, headers: ["Last-Event-ID": String(last)])
                #expect(again.status == 200)
                var events: [SSEEvent] = []
                for _ in 0..<2 { events.append(try await again.next { $0.event == "new_message" }) }
                #expect(events.map { $0.id.flatMap { Int($0) } } == [last + 1, last + 2])
                #expect(events.map { $0.json?["message_id"]?.stringValue } == missed)

                let live = try #require(try await alice.send("four", to: conversation)["id"]?.stringValue)
                let next = try await again.next { $0.event == "new_message" }
                #expect(next.id.flatMap { Int($0) } == last + 3)
                #expect(next.json?["message_id"]?.stringValue == live)
                again.close()
            }
        }
    }

    @Test("An internal signal reaches every device of the named users on every replica, and nobody else")
    func internalSignals() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            try await harness.withReplica(settings: quickPush) { replica in
                let bobOnA = try await harness.socket(bob)
                let bobOnB = try await harness.socket(bob, on: replica)
                let aliceOnA = try await harness.socket(alice)
                for socket in [bobOnA, bobOnB, aliceOnA] { try await socket.registered() }
                let bobStream = try await harness.events(bob, on: replica)
                #expect(bobStream.status == 200)

                let signal: JSONValue = ["type": "call", "call_id": "x"]
                let response = try await harness.signal(
                    ["app_id": .string(harness.appID), "user_ids": ["bob"], "signal": signal],
                    token: harness.fixture.internalTokens.token(of: "voip"))
                #expect(response.status == 200, "\(response.text)")
                #expect(response.json == ["devices": 3, "users": ["bob": 3]])

                for (name, socket) in [("bob on A", bobOnA), ("bob on B", bobOnB)] {
                    let packet = try await socket.next { $0["type"]?.stringValue == "signal" }
                    #expect(packet["body"] == signal, "\(name)")
                    #expect(packet["timestamp"]?.stringValue != nil, "\(name)")
                }
                let event = try await bobStream.next { $0.event == "signal" }
                #expect(event.json == signal)
                try await aliceOnA.expectNone("signal for alice") { $0["type"]?.stringValue == "signal" }

                let nobody = try await harness.signal(
                    ["app_id": .string(harness.appID), "user_ids": ["nobody"], "signal": signal],
                    token: harness.fixture.internalTokens.token(of: "voip"))
                #expect(nobody.status == 200)
                #expect(nobody.json == ["devices": 0, "users": [:]])

                // A device that left is no longer counted, wherever it was.
                await bobOnB.close()
                bobStream.close()
                var devices: JSONValue?
                for _ in 0..<50 {
                    let again = try await harness.signal(
                        ["app_id": .string(harness.appID), "user_ids": ["bob", "alice"], "signal": signal],
                        token: harness.fixture.internalTokens.token(of: "voip"))
                    devices = again.json?["devices"]
                    if devices == 2 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(devices == 2, "bob's socket on A and alice's")
                for socket in [bobOnA, aliceOnA] { await socket.close() }
            }
        }
    }

    @Test("A signal kept for replay reaches the devices that connect while it lasts, until it is cleared or runs out")
    func replayedSignals() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let bob = try await harness.user("bob")
            let token = harness.fixture.internalTokens.token(of: "voip")
            func send(_ signal: JSONValue, key: String, seconds: Int) async throws {
                let response = try await harness.signal(
                    [
                        "app_id": .string(harness.appID), "user_ids": ["bob"], "signal": signal, "replay_key": .string(key),
                        "replay_seconds": .number(Double(seconds)),
                    ], token: token)
                #expect(response.status == 200, "\(response.text)")
            }
            let ring: JSONValue = ["type": "call.ringing", "call": "c1"]
            try await send(ring, key: "call:c1", seconds: 60)
            try await harness.withReplica(settings: quickPush) { replica in
                // Connecting later, on any replica, by WebSocket or event stream: the ring comes.
                let socket = try await harness.socket(bob, on: replica)
                let packet = try await socket.next { $0["type"]?.stringValue == "signal" }
                #expect(packet["body"] == ring)
                let stream = try await harness.events(bob)
                let event = try await stream.next { $0.event == "signal" }
                #expect(event.json == ring)
                stream.close()
                await socket.close()
            }
            // Answered: the same key with 0 seconds clears it, and the answer itself is sent.
            try await send(["type": "call.answered", "call": "c1"], key: "call:c1", seconds: 0)
            let after = try await harness.socket(bob)
            try await after.registered()
            try await after.expectNone("a ring after the answer") { $0["type"]?.stringValue == "signal" }
            await after.close()

            // A kept signal runs out by itself.
            try await send(["type": "call.ringing", "call": "c2"], key: "call:c2", seconds: 1)
            try await Task.sleep(for: .milliseconds(1500))
            let late = try await harness.socket(bob)
            try await late.registered()
            try await late.expectNone("a ring that ran out") { $0["type"]?.stringValue == "signal" }
            await late.close()
        }
    }

    @Test("POST /internal/v1/devices counts each user's connected devices on every replica")
    func internalDevices() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let bob = try await harness.user("bob")
            let token = harness.fixture.internalTokens.token(of: "voip")
            @Sendable func count(_ body: JSONValue, token: String? = nil) async throws -> TestResponse {
                let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
                return try await harness.client.request(.POST, "/internal/v1/devices", headers: headers, json: body)
            }
            let body: JSONValue = ["app_id": .string(harness.appID), "user_ids": ["bob", "carol"]]
            #expect(try await count(body, token: token).json == ["devices": [:]])
            try await harness.withReplica(settings: quickPush) { replica in
                let onA = try await harness.socket(bob)
                let onB = try await harness.socket(bob, on: replica)
                for socket in [onA, onB] { try await socket.registered() }
                let stream = try await harness.events(bob, on: replica)
                #expect(stream.status == 200)
                let counted = try await count(body, token: token)
                #expect(counted.json == ["devices": ["bob": 3]])
                stream.close()
                for socket in [onA, onB] { await socket.close() }
            }
            #expect(try await count(body).status == 401)
            let refused = try await count(["app_id": .string(harness.appID), "user_ids": []], token: token)
            #expect(refused.status == 422 && refused.errorProperty == "user_ids")
        }
    }

    @Test("POST /internal/v1/signals refuses a missing token and malformed bodies")
    func internalSignalsBadInput() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let token = harness.fixture.internalTokens.token(of: "voip")
            let good: [String: JSONValue] = [
                "app_id": .string(harness.appID), "user_ids": ["bob"], "signal": ["type": "call", "call_id": "x"],
            ]
            let missing = try await harness.signal(.object(good), token: nil)
            #expect(missing.status == 401)
            #expect(missing.errorID == "authentication_required")
            let wrong = try await harness.signal(.object(good), token: "not-the-token")
            #expect(wrong.status == 401)

            // The good body with one field set to another value (nil drops it), refused naming that field.
            let changes: [(field: String, value: JSONValue?)] = [
                ("user_ids", []), ("signal", "ring"), ("priority", "high"), ("signal", nil), ("app_id", "not-an-app"),
                ("signal", ["type": "call", "sdp": .string(String(repeating: "x", count: 9000))]),
            ]
            for (field, value) in changes {
                var body = good
                body[field] = value
                let refused = try await harness.signal(.object(body), token: token)
                #expect(refused.status == 422, "\(field) set to \(String(describing: value).prefix(60))")
                #expect(refused.errorProperty == field)
            }

            var badUser = good
            badUser["user_ids"] = ["bob", ""]
            let blank = try await harness.signal(.object(badUser), token: token)
            #expect(blank.status == 422)
            #expect(blank.errorProperty?.hasPrefix("user_ids") == true)

            // A replay needs both its key and its time, each in range; the error names what is wrong or missing.
            let replays: [(key: String?, seconds: Int?, property: String)] = [
                ("", 5, "replay_key"), ("call:x", 3601, "replay_seconds"), ("call:x", -1, "replay_seconds"),
                (nil, 5, "replay_key"), ("call:x", nil, "replay_seconds"),
            ]
            for (key, seconds, property) in replays {
                var replayed = good
                replayed["replay_key"] = key.map { .string($0) }
                replayed["replay_seconds"] = seconds.map { .number(Double($0)) }
                let refused = try await harness.signal(.object(replayed), token: token)
                #expect(refused.status == 422 && refused.errorProperty == property, "\(property)")
            }

            #expect(try await harness.signal(.object(good), token: token).status == 200, "the good body is accepted")
        }
    }

    @Test(
        "A typing indicator sent on one replica reaches the other participant on another, then moves on to paused and finished by itself"
    )
    func typingAcrossReplicas() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            try await harness.withReplica(settings: quickPush) { replica in
                let bobOnB = try await harness.socket(bob, on: replica)
                try await bobOnB.registered()
                let aliceOnA = try await harness.socket(alice)
                try await aliceOnA.registered()

                try await aliceOnA.send([
                    "type": "signal",
                    "body": [
                        "type": "typing_indicator", "object": ["id": .string(conversation)], "data": ["action": "started"],
                    ],
                ])
                let started = try await bobOnB.typing()
                let body = started["body"]
                #expect(body?["object"]?["id"]?.stringValue == conversation)
                #expect(body?["object"]?["type"]?.stringValue == "Conversation")
                #expect(body?["data"]?["action"]?.stringValue == "started")
                #expect(body?["data"]?["user_id"]?.stringValue == "alice")
                #expect(body?["data"]?["sender"]?["user_id"]?.stringValue == "alice")
                #expect(body?["data"]?["sender"]?["id"]?.stringValue == alice.identityID)

                let paused = try await bobOnB.typing()
                #expect(paused["body"]?["data"]?["action"]?.stringValue == "paused")
                #expect(paused["body"]?["data"]?["user_id"]?.stringValue == "alice")
                #expect(paused["body"]?["object"]?["id"]?.stringValue == conversation)
                let finished = try await bobOnB.typing()
                #expect(finished["body"]?["data"]?["action"]?.stringValue == "finished")
                try await bobOnB.expectNone(for: .seconds(1), "typing indicator after finished") {
                    $0["type"]?.stringValue == "signal"
                }
                try await aliceOnA.expectNone("typing indicator echoed to the typist") { $0["type"]?.stringValue == "signal" }
                await aliceOnA.close()
                await bobOnB.close()
            }
        }
    }

    @Test("Presence crosses replicas: a contact sees a user come online on another replica and go offline with their last socket")
    func presenceAcrossReplicas() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            _ = try await alice.conversation(with: ["bob"])
            try await harness.withReplica(settings: quickPush) { replica in
                let bobOnB = try await harness.socket(bob, on: replica)
                try await bobOnB.registered()

                let aliceOnA = try await harness.socket(alice)
                let online = try await bobOnB.presence(of: "alice")
                #expect(online["body"]?["object"]?["type"]?.stringValue == "Identity")
                #expect(online["body"]?["object"]?["url"]?.stringValue?.hasSuffix("/identities/alice") == true)
                #expect(patchValue(online["body"]?["data"], "presence.status") == "available")

                // A second socket on the other replica: closing the first leaves alice online.
                let aliceOnB = try await harness.socket(alice, on: replica)
                try await aliceOnB.registered()
                await aliceOnA.close()
                try await bobOnB.expectNone("presence change while alice still has a socket") {
                    $0["body"]?["object"]?["id"]?.stringValue == alice.identityID
                }
                await aliceOnB.close()
                let offline = try await bobOnB.presence(of: "alice")
                #expect(patchValue(offline["body"]?["data"], "presence.status") == "offline")
                await bobOnB.close()
            }
        }
    }
}
