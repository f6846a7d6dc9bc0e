import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Server API: channels")
struct ServerAPIChannelTests {
    @Test("The app's backend lists and reads every channel, manages its members and deletes messages and channels")
    func moderation() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let server = try await harness.server()
            let first = try await alice.channel("first", members: ["bob"])
            let second = try await bob.channel("second")
            let message = try #require(
                try await bob.post("/\(path(first))/messages", .object(textMessage("spam"))).json?["id"]?.stringValue)

            let list = try await server.get("/channels")
            #expect(list.status == 200)
            #expect(listedIDs(list) == [second, first])
            #expect(list.headers.first(name: "Layer-Count") == "2")
            #expect(listedIDs(try await server.get("/channels?page_size=1&from_id=\(second)")) == [first])
            let channel = try await server.get("/\(path(first))")
            #expect(channel.json?["membership"] == .null)
            #expect(channel.json?["url"]?.stringValue?.contains("/apps/\(server.appID)/\(path(first))") == true)
            #expect(memberIDs(try await server.get("/\(path(first))/members")) == ["alice", "bob"])
            let messages = try await server.get("/\(path(first))/messages")
            #expect(listedIDs(messages) == [message])
            let url = try #require(messages.json?[0]?["url"]?.stringValue)
            #expect(url.hasSuffix("/apps/\(server.appID)/\(path(first))/\(path(message))"))
            #expect(try await server.get("/\(path(first))/\(path(message))").json?["id"]?.stringValue == message)
            #expect(try await server.get("/\(path(second))/\(path(message))").status == 404, "a message of another channel")

            // The backend adds and removes members, whoever owns the channel.
            let socket = try await harness.socket(bob)
            #expect(try await server.put("/\(path(second))/members/carol", [:]).status == 204)
            _ = try await socket.change("create", "Membership")
            #expect(try await server.delete("/\(path(first))/members/bob").status == 204)
            _ = try await socket.change("delete", "Channel")
            #expect(try await bob.get("/\(path(first))/messages").status == 403)
            #expect(try await server.delete("/\(path(first))/members/bob").status == 404)

            // And deletes what it must.
            #expect(try await server.delete("/\(path(first))/\(path(message))").status == 204)
            #expect(listedIDs(try await alice.get("/\(path(first))/messages")).isEmpty)
            #expect(try await server.delete("/\(path(second))").status == 204)
            #expect(try await server.get("/\(path(second))").status == 404)
            #expect(try await bob.get("/channels").headers.first(name: "Layer-Count") == "0")
            await socket.close()
        }
    }
}
