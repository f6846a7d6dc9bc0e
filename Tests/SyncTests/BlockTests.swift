import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Blocks work both ways")
struct BlockTests {
    /// The presence status a packet sets for `user`, if it is a presence change of theirs.
    private func presence(_ packet: JSONValue, of user: String) -> String? {
        guard packet["body"]?["object"]?["id"]?.stringValue == LayerID.identity(userID: user) else { return nil }
        return packet["body"]?["data"]?.arrayValue?.first { $0["property"] == "presence.status" }?["value"]?.stringValue
    }

    @Test(
        "A blocked user cannot put the blocker in a conversation: creating or adding answers 422 participant_blocked and changes nothing"
    )
    func blockedUserCannotAddTheBlocker() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            // Alice is known to the service once she has made a request.
            #expect(try await alice.get("/conversations").json?.arrayValue == [])
            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)

            for body in [
                conversationBody(["alice"], distinct: true, metadata: nil),
                conversationBody(["alice", "carol"], distinct: false, metadata: ["title": "Hi"]),
            ] {
                let refused = try await bob.post("/conversations", body)
                #expect(refused.status == 422)
                #expect(refused.errorID == "participant_blocked")
                #expect(refused.errorProperty == "participants")
            }
            let socket = try await harness.socket(bob)
            let overSocket = try await socket.request(
                "Conversation.create", data: ["participants": [.string(alice.identityID)], "distinct": false])
            #expect(overSocket["success"] == false)
            #expect(overSocket["data"]?["id"] == "participant_blocked")
            await socket.close()

            let withCarol = try await bob.conversation(with: ["carol"], distinct: false)
            for patch: JSONValue in [
                [["operation": "add", "property": "participants", "id": .string(alice.identityID)]],
                [["operation": "set", "property": "participants", "value": ["bob", "carol", "alice"]]],
            ] {
                let refused = try await bob.patch("/\(path(withCarol))", patch)
                #expect(refused.status == 422)
                #expect(refused.errorID == "participant_blocked")
                #expect(refused.errorProperty == "participants")
            }
            let members = try await bob.get("/\(path(withCarol))").json?["participants"]?.arrayValue ?? []
            #expect(Set(members.compactMap { $0["user_id"]?.stringValue }) == ["bob", "carol"])
            #expect(try await alice.get("/conversations").json?.arrayValue == [], "Alice was put in nothing")
            // Carol, whom nobody blocked, may still add Alice.
            let add: JSONValue = [["operation": "add", "property": "participants", "id": .string(alice.identityID)]]
            #expect(try await carol.patch("/\(path(withCarol))", add).status == 204)

            // Once the block is lifted, Bob may start one with Alice.
            #expect(try await api.delete("/users/alice/blocks/bob").status == 204)
            #expect(
                try await bob.post("/conversations", conversationBody(["alice"], distinct: true, metadata: nil)).status == 201)
        }
    }

    @Test("Typing indicators of a blocked user do not reach the blocker, neither as sent nor as moved on by the server")
    func typingDoesNotReachTheBlocker() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)
            let aliceSocket = try await harness.socket(alice)
            let bobSocket = try await harness.socket(bob)
            let carolSocket = try await harness.socket(carol)

            try await bobSocket.send(typingSignal(conversation, "started"))
            _ = try await carolSocket.next { isTyping($0, from: "bob", "started") }
            // The server moves Bob's silent indicator on; Carol sees it finish.
            _ = try await carolSocket.next(timeout: .seconds(30)) { isTyping($0, from: "bob", "finished") }
            try await carolSocket.send(typingSignal(conversation, "started"))
            let first = try await aliceSocket.next { $0["body"]?["type"] == "typing_indicator" }
            #expect(first["body"]?["data"]?["user_id"] == "carol", "the first indicator Alice gets is Carol's: \(first)")
            // Bob still sees Alice typing: the block hides Bob from Alice, not the other way round.
            try await aliceSocket.send(typingSignal(conversation, "started"))
            _ = try await bobSocket.next { isTyping($0, from: "alice", "started") }
            await aliceSocket.close()
            await bobSocket.close()
            await carolSocket.close()
        }
    }

    @Test(
        "The two sides of a block see each other offline, whatever their status, from the moment of the block until it is lifted")
    func presenceHiddenBothWays() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            _ = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            let bobSocket = try await harness.socket(bob)
            let carolSocket = try await harness.socket(carol)
            let aliceSocket = try await harness.socket(alice)
            _ = try await bobSocket.next { presence($0, of: "alice") == "available" }

            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)
            _ = try await bobSocket.next { presence($0, of: "alice") == "offline" }
            _ = try await aliceSocket.next { presence($0, of: "bob") == "offline" }

            // Alice chooses busy: Carol sees it, Bob does not.
            let busy = [["operation": "set", "property": "status", "value": "busy"]] as JSONValue
            #expect(try await aliceSocket.request("Presence.update", data: busy)["success"] == true)
            _ = try await carolSocket.next { presence($0, of: "alice") == "busy" }
            let away = [["operation": "set", "property": "status", "value": "away"]] as JSONValue
            #expect(try await carolSocket.request("Presence.update", data: away)["success"] == true)
            let seenByBob = try await bobSocket.next { presence($0, of: "alice") != nil || presence($0, of: "carol") == "away" }
            #expect(presence(seenByBob, of: "carol") == "away", "Bob saw Alice's presence: \(seenByBob)")

            /// The statuses a Presence.sync on `socket` gives for these users.
            func synced(_ socket: TestWebSocket, _ users: [String]) async throws -> [String: JSONValue] {
                let ids = users.map { JSONValue.string(LayerID.identity(userID: $0)) }
                let answer = try await socket.request("Presence.sync", data: ["ids": .array(ids)])
                var result: [String: JSONValue] = [:]
                for change in answer["data"]?["changes"]?.arrayValue ?? [] {
                    let fields = change["data"]?.arrayValue ?? []
                    result[change["object"]?["id"]?.stringValue ?? "?"] = [
                        "status": fields.first { $0["property"] == "presence.status" }?["value"] ?? .null,
                        "last_seen_at": fields.first { $0["property"] == "presence.last_seen_at" }?["value"] ?? .null,
                    ]
                }
                return result
            }
            #expect(try await synced(bobSocket, ["alice"]) == [alice.identityID: ["status": "offline", "last_seen_at": nil]])
            #expect(try await synced(aliceSocket, ["bob"]) == [bob.identityID: ["status": "offline", "last_seen_at": nil]])
            let carolSees = try await synced(carolSocket, ["alice", "bob"])
            #expect(carolSees[alice.identityID]?["status"] == "busy")
            #expect(carolSees[bob.identityID]?["status"] == "available")

            // Lifted: each sees the other as they are again.
            #expect(try await api.delete("/users/alice/blocks/bob").status == 204)
            _ = try await bobSocket.next { presence($0, of: "alice") == "busy" }
            _ = try await aliceSocket.next { presence($0, of: "bob") == "available" }
            await aliceSocket.close()
            await bobSocket.close()
            await carolSocket.close()
        }
    }

    @Test("The blocker's e-mail and phone are not shown to the blocked user, neither read nor pushed; others still see them")
    func contactDetailsWithheld() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            _ = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            let details: JSONValue = [
                ["operation": "set", "property": "email_address", "value": "alice@example.com"],
                ["operation": "set", "property": "phone_number", "value": "+15550100"],
            ]
            #expect(try await api.patch("/users/alice/identity", details).status == 204)
            #expect(try await bob.get("/identities/alice").json?["email_address"] == "alice@example.com")
            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)

            let seenByBob = try await bob.get("/identities/alice")
            #expect(seenByBob.status == 200)
            #expect(seenByBob.json?["user_id"] == "alice")
            #expect(seenByBob.json?["email_address"] == .null)
            #expect(seenByBob.json?["phone_number"] == .null)
            #expect(try await carol.get("/identities/alice").json?["email_address"] == "alice@example.com")
            #expect(try await alice.get("/identities/bob").status == 200, "the block hides Alice's details, not Bob's")

            // A change of Alice's identity reaches Bob without them, and Carol with them.
            let bobSocket = try await harness.socket(bob)
            let carolSocket = try await harness.socket(carol)
            let rename: JSONValue = [["operation": "set", "property": "display_name", "value": "Alice A."]]
            #expect(try await api.patch("/users/alice/identity", rename).status == 204)
            func value(_ packet: JSONValue, _ property: String) -> JSONValue? {
                packet["body"]?["data"]?.arrayValue?.first { $0["property"]?.stringValue == property }?["value"]
            }
            let isUpdate: (JSONValue) -> Bool = {
                $0["body"]?["object"]?["id"] == "layer:///identities/alice" && $0["body"]?["operation"] == "update"
                    && value($0, "display_name") == "Alice A."
            }
            let renamed: JSONValue = [["operation": "set", "property": "display_name", "value": "Alice A."]]
            #expect(try await bobSocket.next(where: isUpdate)["body"]?["data"] == renamed, "only what changed")
            #expect(try await carolSocket.next(where: isUpdate)["body"]?["data"] == renamed)

            // A change of her contact details alone reaches Carol, and nothing of it Bob.
            let moved: JSONValue = [["operation": "set", "property": "email_address", "value": "a@example.com"]]
            #expect(try await api.patch("/users/alice/identity", moved).status == 204)
            let toCarol = try await carolSocket.next { $0["body"]?["object"]?["id"] == "layer:///identities/alice" }
            #expect(toCarol["body"]?["data"] == moved)
            let toBob = try? await bobSocket.next(timeout: .milliseconds(400)) {
                $0["body"]?["object"]?["id"] == "layer:///identities/alice"
            }
            #expect(toBob == nil, "\(String(describing: toBob))")
            await bobSocket.close()
            await carolSocket.close()
        }
    }
}
