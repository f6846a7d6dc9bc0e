import Foundation
import LayerModels
import LayerServer
import LayerTesting
import LayerVoIP
import Testing

/// Who may call whom: blocks hold for calls as for conversations, in both directions, and a user
/// may place only so many calls a minute.
@Suite struct CallPolicyTests {
    /// Whether `socket` hears a ring within `wait`.
    static func rings(_ socket: TestWebSocket, within wait: Duration = .milliseconds(800)) async throws -> Bool {
        do {
            _ = try await socket.callSignal("call.ringing", timeout: wait)
            return true
        } catch is PushTimeout {
            return false
        }
    }

    @Test("A callee who blocked the caller never rings, and the caller may not call someone they blocked")
    func blocksHoldBothWays() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let alicePhone = try await alice.device()
            let bobPhone = try await bob.device()
            try await alice.block(bob)

            // Bob, whom Alice blocked, calls her: refused, her phone stays quiet, nothing is kept.
            let blocked = try await bob.call(alice)
            #expect(blocked.status == 422, "\(blocked.text)")
            #expect(blocked.errorID == "participant_blocked" && blocked.errorProperty == "callee")
            #expect(try await Self.rings(alicePhone) == false)
            // Alice calls Bob, whom she blocked: refused too.
            let blocking = try await alice.call(bob)
            #expect(blocking.status == 422 && blocking.errorID == "participant_blocked", "\(blocking.text)")
            #expect(blocking.errorProperty == "callee")
            #expect(try await Self.rings(bobPhone) == false)
            for party in [alice, bob] {
                #expect(try await party.get("/calls").json?.arrayValue == [], "no call is kept for \(party.name)")
            }

            // Once the block is lifted, Bob's call rings.
            try await alice.block(bob, lift: true)
            _ = try await bob.placeCall(to: alice)
            #expect(try await Self.rings(alicePhone, within: .seconds(10)))
            await alicePhone.close()
            await bobPhone.close()
        }
    }

    @Test("When the sync service cannot say whether a block stands, the call is refused with 503 and nothing is kept")
    func unknownBlocksFailClosed() async throws {
        try await VoIPHarness.run { harness in
            var settings = VoIPSettings(stunPort: 0)
            // A replica whose sync service is unreachable (nothing listens on port 9 of loopback).
            (settings.authURL, settings.syncURL) = (harness.client.baseURL, "http://127.0.0.1:9")
            try await LiveServer.run(
                [VoIPService.configured(settings)], settings: ServerSettings(internalTokens: harness.fixture.internalTokens)
            ) { replica in
                let alice = try await harness.user("alice")
                let bob = try await harness.user("bob")
                let onReplica = TestClient(baseURL: replica.baseURL, http: replica.http)
                let placed = try await onReplica.request(
                    .POST, "/calls", headers: alice.headers,
                    json: ["callee": .string(bob.identity), "caller_token": "t", "candidates": []])
                #expect(placed.status == 503 && placed.errorID == "service_unavailable", "\(placed.text)")
                #expect(try await alice.get("/calls").json?.arrayValue == [], "no call is kept")
            }
        }
    }

    @Test("A user places at most LAYER_RATE_LIMIT_CALLS calls a minute: then 429 with Retry-After; others may still call")
    func callsAreRateLimitedPerUser() async throws {
        try await VoIPHarness.run(settings: VoIPSettings(stunPort: 0, turnSecret: "t", callsPerMinute: 3)) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            for _ in 0..<3 { _ = try await alice.placeCall(to: bob) }
            let limited = try await alice.call(bob)
            #expect(limited.status == 429 && limited.errorID == "rate_limit_exceeded", "\(limited.text)")
            let retryAfter = try #require(Int(limited.headers.first(name: "Retry-After") ?? ""))
            // A new call every 20 s on average: the next one is about 20 s away.
            #expect((1...20).contains(retryAfter), "Retry-After: \(retryAfter)")
            #expect(try await alice.get("/calls").json?.arrayValue?.count == 3, "the refused call is not kept")
            // Carol, on the same address, has her own allowance.
            _ = try await carol.placeCall(to: bob)
        }
    }
}
