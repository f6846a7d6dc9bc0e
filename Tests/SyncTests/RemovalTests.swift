import Foundation
import LayerModels
import LayerSync
import LayerTesting
import Testing

/// A typing indicator packet a client sends.
func typingSignal(_ conversation: String, _ action: String) -> JSONValue {
    [
        "type": "signal",
        "body": ["type": "typing_indicator", "object": ["id": .string(conversation)], "data": ["action": .string(action)]],
    ]
}

/// Whether `packet` is a typing indicator of `user`, with `action` if one is given.
func isTyping(_ packet: JSONValue, from user: String, _ action: String? = nil) -> Bool {
    packet["type"] == "signal" && packet["body"]?["type"] == "typing_indicator"
        && packet["body"]?["data"]?["user_id"]?.stringValue == user
        && (action.map { packet["body"]?["data"]?["action"]?.stringValue == $0 } ?? true)
}

@Suite("A removed participant sees nothing of the conversation after the removal")
struct RemovalTests {
    @Test("After the removal, reads show the conversation as it was then: metadata, participants, messages, receipts, who joined")
    func readsStopAtTheRemoval() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let dave = try await harness.user("dave")
            let conversation = try await alice.conversation(
                with: ["bob", "carol"], distinct: false, metadata: ["title": "Before"])
            let before = try await alice.send("before the removal", to: conversation)["id"]!.stringValue!
            let elsewhere = try await alice.conversation(with: ["carol"], distinct: false)
            _ = try await alice.send("elsewhere", to: elsewhere)
            let carolAnchor = try await carol.sync(anchor: 0)["anchor"]!

            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": .string(carol.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", remove).status == 204)
            // What happens in the conversation afterwards.
            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "set", "property": "metadata.title", "value": "After"]]
                )
                .status == 204)
            let add: JSONValue = [["operation": "add", "property": "participants", "id": .string(dave.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", add).status == 204)
            let after = try await bob.send("after the removal", to: conversation)["id"]!.stringValue!
            #expect(try await bob.post("/\(path(before))/receipts", ["type": "read"]).status == 204)
            #expect(try await dave.post("/\(path(before))/receipts", ["type": "delivery"]).status == 204)

            // Carol reads the conversation as she left it.
            let seen = try await carol.get("/\(path(conversation))")
            #expect(seen.status == 200)
            #expect(seen.json?["metadata"] == ["title": "Before"])
            #expect(seen.json?["participants"] == [])
            #expect(seen.json?["last_message"]?["id"]?.stringValue == before)
            let listed = try await carol.get("/conversations").json?.arrayValue?.first { $0["id"]?.stringValue == conversation }
            #expect(listed?["metadata"] == ["title": "Before"])
            // Her list by last message does not move it up for a message she cannot see.
            #expect(listedIDs(try await carol.get("/conversations?sort_by=last_message")) == [elsewhere, conversation])
            #expect(listedIDs(try await bob.get("/conversations?sort_by=last_message")) == [conversation])
            #expect(listedIDs(try await carol.get("/\(path(conversation))/messages")) == [before])
            #expect(try await carol.get("/\(path(after))").status == 404)
            let asLeft: JSONValue = .object([alice.identityID: "read", bob.identityID: "sent", carol.identityID: "sent"])
            #expect(try await carol.get("/\(path(before))").json?["recipient_status"] == asLeft)
            #expect(try await carol.get("/identities/dave").status == 404, "Dave joined after she left")
            #expect(try await carol.get("/identities/bob").status == 200)

            // Her changelog has the removal and nothing after it; it too shows the conversation as she left it.
            let (operations, _) = try await carol.catchUp(from: carolAnchor)
            #expect(operations.map { $0["type"] } == ["update_conversation"])
            #expect(operations.first?["conversation"]?["metadata"] == ["title": "Before"])
            #expect(operations.first?["conversation"]?["participants"] == [])
            // A new device of hers starts from the same.
            let snapshot = (try await carol.sync(anchor: 0, policy: "complete")["operations"]?.arrayValue ?? []).filter {
                $0["conversation_id"]?.stringValue == conversation
            }
            #expect(snapshot.map { $0["type"] } == ["new_conversation", "new_message"])
            #expect(snapshot.first?["conversation"]?["metadata"] == ["title": "Before"])
            #expect(snapshot.last?["message"]?["recipient_status"] == asLeft)

            // Her own reading of what she kept still reaches her own devices.
            #expect(try await carol.post("/\(path(before))/receipts", ["type": "read"]).status == 204)
            let (own, _) = try await carol.catchUp(from: carolAnchor)
            #expect(own.map { $0["type"] } == ["update_conversation", "update_status"])
            #expect(try await carol.get("/\(path(before))").json?["recipient_status"]?[carol.identityID] == "read")

            // Those still in see everything.
            let current = try await bob.get("/\(path(conversation))").json
            #expect(current?["metadata"] == ["title": "After"])
            #expect(
                Set(current?["participants"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []) == [
                    "alice", "bob", "dave",
                ])
            let status = try await bob.get("/\(path(before))").json?["recipient_status"]
            #expect(status?[bob.identityID] == "read")
            #expect(status?[dave.identityID] == "delivered")
        }
    }

    @Test("After the removal, nothing of the conversation is pushed to the removed participant, typing indicators included")
    func pushesStopAtTheRemoval() async throws {
        // The server moves a silent typist on after a second; the removal comes well before.
        let settings = SyncSettings(push: PushSettings(typingTimeout: .seconds(1)))
        try await SyncHarness.run(settings: settings) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(
                with: ["bob", "carol"], distinct: false, metadata: ["title": "Before"])
            let elsewhere = try await alice.conversation(with: ["carol"], distinct: false)
            let carolSocket = try await harness.socket(carol)
            let aliceSocket = try await harness.socket(alice)
            let bobSocket = try await harness.socket(bob)

            // Bob starts typing while Carol is in, then falls silent.
            try await bobSocket.send(typingSignal(conversation, "started"))
            _ = try await carolSocket.next { isTyping($0, from: "bob", "started") }
            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": .string(carol.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", remove).status == 204)
            let removal = try await carolSocket.next {
                $0["body"]?["object"]?["id"]?.stringValue == conversation && $0["body"]?["operation"] == "update"
            }
            // She sees everybody leave her view of it (and keeps the metadata she had).
            let patch = removal["body"]?["data"]?.arrayValue ?? []
            #expect(patch.allSatisfy { $0["operation"] == "remove" && $0["property"] == "participants" })
            #expect(Set(patch.compactMap { $0["id"]?.stringValue }) == [alice.identityID, bob.identityID, carol.identityID])

            // Afterwards: new metadata, a message, and the server moving Bob's indicator on to finished.
            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "set", "property": "metadata.title", "value": "After"]]
                )
                .status == 204)
            _ = try await bob.send("after the removal", to: conversation)
            _ = try await aliceSocket.next(timeout: .seconds(30)) { isTyping($0, from: "bob", "finished") }
            // Something that does reach Carol, after all of that.
            let barrier = try await alice.send("still here", to: elsewhere)["id"]!.stringValue!
            var leaked: [JSONValue] = []
            while true {
                let packet = try await carolSocket.next()
                if packet["body"]?["object"]?["id"]?.stringValue == barrier { break }
                if packet["type"] == "signal" || packet.contains(conversation) { leaked.append(packet) }
            }
            #expect(leaked.isEmpty, "pushed to Carol after her removal: \(leaked)")
            await carolSocket.close()
            await aliceSocket.close()
            await bobSocket.close()
        }
    }
}

extension JSONValue {
    /// Whether the text appears anywhere in this value, as a string or part of one.
    func contains(_ text: String) -> Bool {
        switch self {
        case .string(let value): value.contains(text)
        case .array(let values): values.contains { $0.contains(text) }
        case .object(let fields): fields.values.contains { $0.contains(text) }
        default: false
        }
    }
}
