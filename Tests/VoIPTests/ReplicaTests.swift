import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerTesting
import LayerVoIP
import PostgresNIO
import Testing

/// Several `layer-voip` replicas on one database, and calls reaching the relationship graph.
@Suite struct VoIPReplicaTests {
    @Test("With two replicas sweeping, a call that times out is missed once; either replica serves it")
    func timeoutsFireOnceAcrossReplicas() async throws {
        let settings = VoIPSettings(stunPort: 0, ringTimeoutSeconds: 1)
        try await VoIPHarness.run(settings: settings) { harness in
            let base = harness.client.baseURL
            var second = settings
            (second.authURL, second.syncURL) = (base, base)
            try await LiveServer.run(
                [VoIPService.configured(second)], settings: ServerSettings(internalTokens: harness.fixture.internalTokens)
            ) { replica in
                let alice = try await harness.user("alice")
                let bob = try await harness.user("bob")
                let bobPhone = try await bob.device()
                // Placed through the second replica, read through the first.
                let onReplica = TestClient(baseURL: replica.baseURL, http: replica.http)
                let placed = try await onReplica.request(
                    .POST, "/calls", headers: alice.headers,
                    json: ["callee": .string(bob.identity), "caller_token": "t", "candidates": []])
                #expect(placed.status == 201, "\(placed.text)")
                let id = try #require(placed.json?["id"]?.stringValue)
                #expect(try await alice.get(alice.path(id)).json?["state"] == "ringing")
                let missed = try await bobPhone.callSignal("call.missed", timeout: .seconds(5))
                #expect(missed["call"]?["id"]?.stringValue == id)
                // Moved once: a signal may come again (delivery is at least once), but only of the same move.
                do {
                    let again = try await bobPhone.callSignal("call.missed", timeout: .seconds(1))
                    #expect(again["call"]?["ended_at"] == missed["call"]?["ended_at"], "missed twice")
                } catch is PushTimeout {}
                await bobPhone.close()
            }
        }
    }

    @Test("A call is reported to the name resolution service's relationship graph, off the request path")
    func callsReachTheRelationshipGraph() async throws {
        try await AuthFixture.run(withNames: NamesSettings(), withVoIP: VoIPSettings(stunPort: 0)) { fixture in
            let harness = VoIPHarness(fixture: fixture)
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            _ = try await alice.placeCall(to: bob)
            var calls: Int64 = 0
            for _ in 0..<50 where calls == 0 {
                try await Task.sleep(for: .milliseconds(100))
                let rows = try await fixture.server.postgres.query(
                    """
                    SELECT calls FROM names.relationships
                    WHERE app_id = \(fixture.app.id) AND a = 'alice' AND b = 'bob'
                    """, logger: .test)
                for try await count in rows.decode(Int64.self) { calls = count }
            }
            #expect(calls == 1)
        }
    }
}
