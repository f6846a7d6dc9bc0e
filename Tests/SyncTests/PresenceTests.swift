import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Presence and identity changes")
struct PresenceTests {
    /// The value a patch sets for `property`, if it does.
    private func value(_ packet: JSONValue, _ property: String) -> JSONValue? {
        packet["body"]?["data"]?.arrayValue?.first { $0["property"]?.stringValue == property }?["value"]
    }

    /// Waits for `user`'s presence to be pushed to `socket` as `status`; the status it saw last
    /// if that never comes.
    private func presence(of user: String, on socket: TestWebSocket, is status: String) async throws -> Bool {
        var last: String?
        do {
            _ = try await socket.next { packet in
                guard packet["body"]?["object"]?["id"]?.stringValue == LayerID.identity(userID: user),
                    let seen = value(packet, "presence.status")?.stringValue
                else { return false }
                last = seen
                return seen == status
            }
            return true
        } catch {
            Issue.record("\(user)'s presence never became \(status) (last seen: \(last ?? "none"))")
            return false
        }
    }

    @Test(
        "A chosen status reaches those who share a conversation; invisible looks offline to them but not to its owner; auto restores the last choice"
    )
    func chosenStatus() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            _ = try await alice.conversation(with: ["bob"])
            let bobSocket = try await harness.socket(bob)
            let aliceSocket = try await harness.socket(alice)
            #expect(try await presence(of: "alice", on: bobSocket, is: "available"))

            let busy = try await aliceSocket.request(
                "Presence.update", data: [["operation": "set", "property": "status", "value": "busy"]])
            #expect(busy["success"] == .bool(true))
            #expect(try await presence(of: "alice", on: bobSocket, is: "busy"))
            _ = try await aliceSocket.request(
                "Presence.update", data: [["operation": "set", "property": "status", "value": "invisible"]])
            #expect(try await presence(of: "alice", on: bobSocket, is: "offline"))
            #expect(try await presence(of: "alice", on: aliceSocket, is: "busy"))
            #expect(try await presence(of: "alice", on: aliceSocket, is: "invisible"))

            let synced = try await bobSocket.request("Presence.sync", data: ["ids": ["layer:///identities/alice"]])
            let change = try #require(synced["data"]?["changes"]?.arrayValue?.first)
            #expect(change["object"]?["id"] == "layer:///identities/alice")
            #expect(change["data"]?.arrayValue?.first { $0["property"] == "presence.status" }?["value"] == "offline")

            let bad = try await aliceSocket.request(
                "Presence.update", data: [["operation": "set", "property": "status", "value": "asleep"]])
            #expect(bad["data"]?["data"]?["property"] == "status")
            let none = try await aliceSocket.request("Presence.update", data: [:])
            #expect(none["data"]?["id"] == "missing_property")
            #expect(try await aliceSocket.request("Presence.subscribe")["success"] == .bool(true))

            await aliceSocket.close()
            #expect(try await presence(of: "alice", on: bobSocket, is: "offline"))
            let back = try await harness.socket(alice)
            #expect(try await presence(of: "alice", on: bobSocket, is: "offline"), "she is still invisible")
            _ = try await back.request("Presence.update", data: [["operation": "set", "property": "status", "value": "auto"]])
            #expect(try await presence(of: "alice", on: back, is: "invisible"))
            await back.close()
            await bobSocket.close()
        }
    }

    @Test("Presence.sync answers only about users the caller follows, such as those they share or shared a conversation with")
    func presenceOnlyOfContacts() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let stranger = try await harness.user("stranger")
            let conversation = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            let aliceSocket = try await harness.socket(alice)
            let busy = try await aliceSocket.request(
                "Presence.update", data: [["operation": "set", "property": "status", "value": "busy"]])
            #expect(busy["success"] == .bool(true))

            /// Whose presence a Presence.sync of these ids answers, with the status it gives.
            func answered(_ user: UserClient, about ids: [String]) async throws -> [String: String] {
                let socket = try await harness.socket(user)
                let identities = ids.map { JSONValue.string(LayerID.identity(userID: $0)) }
                let synced = try await socket.request("Presence.sync", data: ["ids": .array(identities)])
                await socket.close()
                var result: [String: String] = [:]
                for change in synced["data"]?["changes"]?.arrayValue ?? [] {
                    let status = change["data"]?.arrayValue?.first { $0["property"] == "presence.status" }?["value"]
                    result[change["object"]?["id"]?.stringValue ?? "?"] = status?.stringValue
                }
                return result
            }
            #expect(try await answered(bob, about: ["alice", "stranger"]) == [alice.identityID: "busy"])
            #expect(try await answered(stranger, about: ["alice", "bob"]) == [:], "a stranger learns nobody's presence")
            #expect(try await answered(stranger, about: ["stranger"]).keys.sorted() == [stranger.identityID])
            #expect(try await answered(carol, about: ["alice"]) == [alice.identityID: "busy"])

            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": .string(carol.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", remove).status == 204)
            #expect(
                try await answered(carol, about: ["alice", "bob"]) == [alice.identityID: "busy", bob.identityID: "offline"],
                "a removed participant still follows those they shared the conversation with")
            await aliceSocket.close()
        }
    }

    @Test("Identity changes made by the backend are pushed to the user and their followers, and to nobody else")
    func identityChanges() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let stranger = try await harness.user("stranger")
            _ = try await alice.conversation(with: ["bob"])
            let api = try await harness.server()
            let bobSocket = try await harness.socket(bob)
            let strangerSocket = try await harness.socket(stranger)

            let patched = try await api.patch(
                "/users/alice/identity", [["operation": "set", "property": "display_name", "value": "Alice A."]])
            #expect(patched.status == 204)
            let update = try await bobSocket.next { $0["body"]?["object"]?["id"] == "layer:///identities/alice" }
            #expect(update["body"]?["operation"] == "update")
            #expect(value(update, "display_name") == "Alice A.")

            #expect(try await api.delete("/users/alice/identity").status == 204)
            let deleted = try await bobSocket.change("delete", "Identity")
            #expect(deleted["body"]?["object"]?["id"] == "layer:///identities/alice")
            #expect(deleted["body"]?["data"] == .null)
            let leaked = try? await strangerSocket.next(timeout: .milliseconds(300)) {
                $0["body"]?["object"]?["id"] == "layer:///identities/alice"
            }
            #expect(leaked == nil)
            await bobSocket.close()
            await strangerSocket.close()
        }
    }
}
