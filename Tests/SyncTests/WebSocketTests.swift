import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("WebSocket push")
struct WebSocketTests {
    @Test("A message reaches the other participant's socket and the sender's own, as create Message and update Conversation")
    func messageReachesEveryDevice() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let bobSocket = try await harness.socket(bob)
            let aliceSocket = try await harness.socket(alice)
            let sent = try await alice.send("hello", to: conversation)

            let created = try await bobSocket.change("create", "Message")
            #expect(created["body"]?["object"]?["id"] == sent["id"])
            #expect(created["body"]?["data"]?["parts"]?.arrayValue?.first?["body"]?.stringValue == "hello")
            #expect(created["body"]?["data"]?["is_unread"] == .bool(true))
            #expect(created["timestamp"]?.stringValue != nil)
            let update = try await bobSocket.change("update", "Conversation")
            #expect(update["body"]?["object"]?["id"]?.stringValue == conversation)
            let patch = try #require(update["body"]?["data"]?.arrayValue)
            #expect(patch.contains { $0["property"] == "last_message" && $0["id"] == sent["id"] })
            #expect(patch.contains { $0["property"] == "unread_message_count" && $0["value"] == 1 })

            let own = try await aliceSocket.change("create", "Message")
            #expect(own["body"]?["data"]?["is_unread"] == .bool(false))
            await bobSocket.close()
            await aliceSocket.close()
        }
    }

    @Test("Packets carry a per-connection counter from 0, and Counter.read names the last one sent before it")
    func counters() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let socket = try await harness.socket(alice)
            // The first packet is alice's own presence, pushed when her first socket connected.
            let presence = try await socket.change("update", "Identity")
            #expect(presence["counter"] == 0)
            _ = try await alice.send("one", to: conversation)
            let created = try await socket.change("create", "Message")
            let updated = try await socket.change("update", "Conversation")
            #expect(created["counter"] == 1)
            #expect(updated["counter"] == 2)
            let read = try await socket.request("Counter.read")
            #expect(read["success"] == .bool(true))
            #expect(read["data"]?["counter"] == 2)
            await socket.close()

            let again = try await harness.socket(alice)
            let first = try await again.next()
            #expect(first["counter"] == 0, "a new connection counts from 0 again")
            await again.close()
        }
    }
}
