import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Access to conversations")
struct AccessTests {
    @Test("Unauthenticated callers get 401 with a nonce; other apps and strangers learn nothing")
    func whoMaySee() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let message = try await alice.send("secret", to: conversation)["id"]!.stringValue!

            for route in ["/conversations", "/\(path(conversation))", "/\(path(message))"] {
                let anonymous = try await harness.client.request(.GET, route)
                #expect(anonymous.status == 401, "\(route)")
                #expect(anonymous.errorID == "authentication_required")
                #expect(anonymous.json?["data"]?["nonce"]?.stringValue?.isEmpty == false)
                let forged = try await harness.client.request(.GET, route, headers: AuthFixture.sessionHeader("forged"))
                #expect(forged.status == 401, "\(route)")
            }
            let post = try await harness.client.request(.POST, "/sync", json: ["anchor": 0])
            #expect(post.status == 401)

            // A user of the same name in another app sees nothing of this app.
            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let foreign = try await harness.fixture.session(user: "alice", app: otherApp)
            let foreignAlice = UserClient(id: "alice", token: foreign, client: harness.client)
            #expect(try await foreignAlice.get("/\(path(conversation))").status == 404)
            #expect(try await foreignAlice.get("/\(path(message))").status == 404)
            #expect(try await foreignAlice.get("/\(path(conversation))/messages").status == 404)
            #expect(try await foreignAlice.sendRaw("hi", to: conversation).status == 404)
            #expect(try await foreignAlice.post("/\(path(message))/receipts", ["type": "read"]).status == 404)
            #expect(try await foreignAlice.delete("/\(path(conversation))?mode=all_participants").status == 404)
            #expect(try await foreignAlice.get("/conversations").headers.first(name: "Layer-Count") == "0")
            let foreignSync = try await foreignAlice.sync(anchor: 0, policy: "complete")
            #expect(foreignSync["operations"]?.arrayValue?.isEmpty == true)
            // Their distinct conversation with "bob" is their own, not this app's.
            let theirs = try await foreignAlice.conversation(with: ["bob"])
            #expect(theirs != conversation)

            // A stranger in the same app.
            let mallory = try await harness.user("mallory")
            #expect(try await mallory.get("/\(path(conversation))").status == 404)
            #expect(
                try await mallory.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "mallory"]]
                ).status == 404)
            #expect(try await mallory.get("/identities/alice").status == 404)
            let stolen = try await mallory.syncRaw(
                anchor: 0, operations: [["type": "update_status", "message_id": .string(message), "status": "read"]])
            #expect(stolen.status == 404)
            #expect(try await alice.get("/\(path(message))").json?["recipient_status"]?["layer:///identities/mallory"] == nil)

            // The Accept header is required.
            let noAccept = try await alice.client.request(.GET, "/conversations", headers: alice.auth, accept: nil)
            #expect(noAccept.status == 406)
            #expect(noAccept.errorID == "invalid_header")
        }
    }

    @Test("A session token in the query string opens push connections, and nothing else")
    func queryTokenOnlyForPush() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            for route in ["/conversations", "/\(path(conversation))", "/announcements"] {
                let queried = try await harness.client.request(.GET, "\(route)?session_token=\(alice.token)")
                #expect(queried.status == 401, "\(route)")
                #expect(queried.errorID == "authentication_required")
            }
            let synced = try await harness.client.request(.POST, "/sync?session_token=\(alice.token)", json: ["anchor": 0])
            #expect(synced.status == 401)
            // The push routes take it, as browsers cannot set headers on a WebSocket or an EventSource.
            let socket = try await harness.socket(alice)
            await socket.close()
            let events = try await harness.events(alice)
            #expect(events.status == 200)
            events.close()
        }
    }
}
