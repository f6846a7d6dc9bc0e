import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("WebSocket push")
struct WebSocketTests {
    @Test("A message reaches the other participant's socket and the sender's own, as create Message and update Conversation")
    func messageReachesEveryDevice() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
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
            for _ in 0..<2 {
                let socket = try await harness.socket(alice, ready: false)
                try await socket.send(["type": "request", "body": ["request_id": "c0", "method": "Counter.read"]])
                let response = try await socket.next { $0["type"] == "response" && $0["body"]?["request_id"] == "c0" }
                // Alice's own presence may come first (offline as her last socket left, available
                // as this one came): at most two packets. The connection before sent at least
                // four, so a small counter means counting started again from 0.
                let counter = try #require(response["counter"]?.intValue)
                #expect((0...2).contains(counter), "a new connection counts from 0")
                #expect(response["body"]?["data"]?["counter"]?.intValue == counter - 1)
                _ = try await alice.send("one", to: conversation)
                let created = try #require(try await socket.change("create", "Message")["counter"]?.intValue)
                let updated = try #require(try await socket.change("update", "Conversation")["counter"]?.intValue)
                #expect(created > counter)
                #expect(updated == created + 1)
                let read = try await socket.request("Counter.read")
                #expect(read["success"] == .bool(true))
                #expect(read["data"]?["counter"]?.intValue == updated)
                await socket.close()
            }
        }
    }
}
