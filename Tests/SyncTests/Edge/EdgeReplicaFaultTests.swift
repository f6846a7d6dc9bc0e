import Foundation
import LayerModels
import LayerTesting
import Testing

/// Replicas as an operator scales them: two auth and two sync processes behind the real edge, on
/// one PostgreSQL. It runs with the fault tests (after the rest of the suite), as it kills a process
/// under load.
@Suite("Replicas behind the edge", .serialized)
struct EdgeReplicaFaultTests {
    @Test(
        "Two auth and two sync replicas behind the edge: migrations applied once, a message sent through one replica pushed from the other, and a sync replica killed with SIGKILL mid-traffic loses no acknowledged message"
    )
    func replicasBehindTheEdge() async throws {
        try await EdgeDeployment.run(replicas: ["auth": 2, "sync": 2]) { edge in
            // Every replica started at once on the empty database; each migration was applied by
            // exactly one of them (the others waited for it and found it done).
            var applied: [String: Int] = [:]
            for process in edge.replicas.values.joined() {
                for line in await process.output.split(separator: "\n") where line.contains("Applying migration") {
                    let schema = line.firstMatch(of: /schema=(\S+)/)?.1 ?? "?"
                    let migration = line.firstMatch(of: /migration=(\S+)/)?.1 ?? "?"
                    applied["\(schema).\(migration)", default: 0] += 1
                }
            }
            #expect(applied.keys.contains { $0.hasPrefix("auth.") } && applied.keys.contains { $0.hasPrefix("sync.") })
            #expect(applied.filter { $0.value != 1 }.isEmpty, "applied more than once: \(applied.filter { $0.value != 1 })")

            let app = try await edge.registerApp()
            let alice = try await edge.user("alice", app: app)
            let bob = try await edge.user("bob", app: app)
            let conversation = try await alice.conversation(with: ["bob"])
            let start = try #require(try await bob.sync()["anchor"])

            // Bob's device on replica 1; Alice sends on replica 0.
            let syncPorts = try #require(edge.ports["sync"])
            let socket = try await TestWebSocket.connect(
                url: "ws://127.0.0.1:\(syncPorts[1])/websocket?session_token=\(bob.token)")
            try await socket.ready()
            let onReplica0 = UserClient(id: "alice", token: alice.token, client: edge.direct("sync", 0))
            let sent = try await onReplica0.send("across replicas", to: conversation)
            let id = try #require(sent["id"]?.stringValue)
            _ = try await socket.next(timeout: .seconds(15)) {
                $0["body"]?["operation"] == "create" && $0["body"]?["object"]?["id"]?.stringValue == id
            }
            await socket.close()

            // Eight senders through the edge while replica 1 is killed and, a while later, started again.
            let replica = try #require(edge.replicas["sync"]?[1])
            let outcomes = try await FaultLoad.send(senders: 8, as: alice, to: conversation, stop: StopFlag()) {
                try await Task.sleep(for: .seconds(2))
                try await replica.kill()
                try await Task.sleep(for: .seconds(2))
                try await replica.start()
                try await Task.sleep(for: .seconds(2))
            }
            let acknowledged = FaultLoad.acknowledged(outcomes)
            print(
                "sync replica killed behind the edge: \(acknowledged.count) acknowledged, "
                    + "\(outcomes.filter { $0.status == 503 }.count) answered 503, "
                    + "\(outcomes.filter { $0.status == nil }.count) without an answer"
            )
            // Both replicas took messages through the edge (its log names the upstream of each).
            let log = edge.edgeLog
            for port in syncPorts {
                #expect(log.contains("upstream=127.0.0.1:\(port)/201"), "no message went through the replica on \(port)")
            }

            let (missing, twice) = try await FaultLoad.findAcknowledged(acknowledged + [id], by: bob, after: start)
            #expect(missing.isEmpty, "acknowledged but not stored: \(missing.prefix(5))")
            #expect(twice.isEmpty, "in the changelog twice: \(twice.prefix(5))")
        }
    }
}
