import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("What followers are pushed")
struct FollowingPushTests {
    /// The next change packet of `socket` about `user`'s identity.
    private func identityChange(of user: String, on socket: TestWebSocket) async throws -> JSONValue {
        try await socket.next { packet in
            packet["type"] == "change" && packet["body"]?["object"]?["id"]?.stringValue == LayerID.identity(userID: user)
                && packet["body"]?["data"]?.arrayValue?.contains { $0["property"] == "presence.status" } != true
        }
    }

    @Test("A follow pushes the identity to the follower's devices; changes of it only what changed; an unfollow a delete")
    func followerGetsChanges() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            _ = try await harness.user("bob", claims: ["first_name": "Bob"])
            let api = try await harness.server()
            let socket = try await harness.socket(alice)
            let events = try await harness.events(alice)

            #expect(try await alice.put(followPath("bob")).status == 204)
            let created = try await identityChange(of: "bob", on: socket)
            #expect(created["body"]?["operation"] == "create")
            #expect(created["body"]?["object"]?["type"] == "Identity")
            #expect(created["body"]?["data"]?["id"] == "layer:///identities/bob")
            #expect(created["body"]?["data"]?["first_name"] == "Bob")
            #expect(created["body"]?["data"]?["metadata"] == [:], "the full identity")
            #expect(created["body"]?["data"]?["presence"]?["status"] == "offline")
            let event = try await events.next { $0.event == "identity" }
            #expect(event.json?["operation"] == "create")
            #expect(try await alice.put(followPath("bob")).status == 204)

            let patched = try await api.patch(
                "/users/bob/identity",
                [
                    ["operation": "set", "property": "last_name", "value": "Builder"],
                    ["operation": "set", "property": "first_name", "value": "Bob"],
                    ["operation": "set", "property": "metadata.level", "value": "7"],
                ])
            #expect(patched.status == 204)
            let update = try await identityChange(of: "bob", on: socket)
            #expect(update["body"]?["operation"] == "update")
            #expect(
                update["body"]?["data"]
                    == [
                        ["operation": "set", "property": "last_name", "value": "Builder"],
                        ["operation": "set", "property": "metadata.level", "value": "7"],
                    ], "only what changed, never first_name again: \(update)")
            let replaced = try await api.put(
                "/users/bob/identity", ["display_name": "Bob", "last_name": "Builder", "metadata": ["tier": "gold"]])
            #expect(replaced.status == 204)
            let replace = try await identityChange(of: "bob", on: socket)
            #expect(
                replace["body"]?["data"]
                    == [
                        ["operation": "set", "property": "display_name", "value": "Bob"],
                        ["operation": "set", "property": "first_name", "value": nil],
                        ["operation": "delete", "property": "metadata.level"],
                        ["operation": "set", "property": "metadata.tier", "value": "gold"],
                    ], "\(replace)")

            #expect(try await alice.delete(followPath("bob")).status == 204)
            let deleted = try await identityChange(of: "bob", on: socket)
            #expect(deleted["body"]?["operation"] == "delete")
            #expect(deleted["body"]?["data"] == .null)
            #expect(
                try await api.patch("/users/bob/identity", [["operation": "set", "property": "last_name", "value": "B"]]).status
                    == 204)
            let leaked = try? await socket.next(timeout: .milliseconds(400)) {
                $0["body"]?["object"]?["id"] == "layer:///identities/bob"
            }
            #expect(leaked == nil, "an unfollowed user's changes no longer come")
            events.close()
            await socket.close()
        }
    }

    @Test("Identities made for followed users, and deleted, reach the followers; 1.0 devices get `patch`")
    func createdAndDeletedIdentities() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let api = try await harness.server()
            #expect(try await alice.put(followPath("helper")).status == 204)
            let socket = try await harness.socket(alice)
            let old = try await harness.socket(alice, subprotocol: "layer-1.0")

            #expect(
                try await api.post("/users/helper/identity", ["display_name": "Helper", "identity_type": "bot"]).status == 201)
            let created = try await identityChange(of: "helper", on: socket)
            #expect(created["body"]?["operation"] == "create")
            #expect(created["body"]?["data"]?["identity_type"] == "bot")
            _ = try await identityChange(of: "helper", on: old)

            #expect(
                try await api.patch("/users/helper/identity", [["operation": "set", "property": "last_name", "value": "H"]])
                    .status == 204)
            #expect(try await identityChange(of: "helper", on: socket)["body"]?["operation"] == "update")
            #expect(try await identityChange(of: "helper", on: old)["body"]?["operation"] == "patch")

            #expect(try await api.delete("/users/helper/identity").status == 204)
            #expect(try await identityChange(of: "helper", on: socket)["body"]?["operation"] == "delete")
            #expect(try await alice.get(followPath("helper")).status == 204, "the follow outlives the identity")
            await socket.close()
            await old.close()
        }
    }

    @Test("Presence reaches explicit followers and Presence.sync answers for them; a blocked follower gets less")
    func presenceOfFollowed() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let api = try await harness.server()
            #expect(try await alice.put(followPath("bob")).status == 204)
            let aliceSocket = try await harness.socket(alice)
            let old = try await harness.socket(alice, subprotocol: "layer-1.0")
            let bobSocket = try await harness.socket(bob)
            let online = try await aliceSocket.next { packet in
                packet["body"]?["object"]?["id"] == "layer:///identities/bob"
                    && packet["body"]?["data"]?[0]?["property"] == "presence.status"
            }
            #expect(online["body"]?["operation"] == "update")
            #expect(online["body"]?["data"]?[0]?["value"] == "available")
            let legacy = try await old.next { $0["body"]?["object"]?["id"] == "layer:///identities/bob" }
            #expect(legacy["body"]?["operation"] == "patch", "1.0 devices get presence as a patch")

            let synced = try await aliceSocket.request("Presence.sync", data: ["ids": ["layer:///identities/bob", "carol"]])
            let answered = synced["data"]?["changes"]?.arrayValue?.compactMap { $0["object"]?["id"]?.stringValue }
            #expect(answered == ["layer:///identities/bob"], "carol is not followed")
            let all = try await aliceSocket.request("Presence.sync", data: ["since": "2020-01-01T00:00:00.000Z"])
            let everyone = all["data"]?["changes"]?.arrayValue?.compactMap { $0["object"]?["id"]?.stringValue }
            #expect(Set(everyone ?? []) == ["layer:///identities/alice", "layer:///identities/bob"])

            // Carol, blocked by Bob, follows him: his identity comes without how to reach him.
            let fields: JSONValue = ["display_name": "Bob", "email_address": "bob@example.com", "phone_number": "+15550100"]
            #expect(try await api.put("/users/bob/identity", fields).status == 204)
            _ = try await identityChange(of: "bob", on: aliceSocket)
            #expect(try await api.post("/users/bob/blocks", ["user_id": "carol"]).status == 204)
            let carolSocket = try await harness.socket(carol)
            #expect(try await carol.put(followPath("bob")).status == 204)
            let created = try await identityChange(of: "bob", on: carolSocket)
            #expect(created["body"]?["data"]?["display_name"] == "Bob")
            #expect(created["body"]?["data"]?["email_address"] == .null)
            #expect(created["body"]?["data"]?["presence"]?["status"] == "offline", "blocked users see each other offline")
            #expect(
                try await api.patch(
                    "/users/bob/identity", [["operation": "set", "property": "email_address", "value": "b@example.com"]]
                ).status == 204)
            let toAlice = try await identityChange(of: "bob", on: aliceSocket)
            #expect(toAlice["body"]?["data"] == [["operation": "set", "property": "email_address", "value": "b@example.com"]])
            let hidden = try? await carolSocket.next(timeout: .milliseconds(400)) {
                $0["body"]?["object"]?["id"] == "layer:///identities/bob"
            }
            #expect(hidden == nil, "a change of contact details alone does not reach the blocked follower")
            for socket in [aliceSocket, old, bobSocket, carolSocket] { await socket.close() }
        }
    }
}
