import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

/// The Server API acting as one user: reading a message as they see it and sending as them.
extension ServerAPITests {
    @Test("Acting as a user: a message as the user sees it, and 404 wherever the Client API answers them 404")
    func readMessageAsUser() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol"])
            let message = try await api.send("Hi", to: id, sender: senderIdentity("alice"))

            let asBob = try await api.get("/users/bob/\(path(message))")
            #expect(asBob.status == 200)
            #expect(asBob.json?["id"]?.stringValue == message)
            #expect(asBob.json?["is_unread"] == true)
            #expect(asBob.json?["sender"]?["user_id"] == "alice")
            let asAlice = try await api.get("/users/alice/\(path(message))")
            #expect(asAlice.json?["is_unread"] == false)
            // The same answer as the Client API gives the user.
            let bob = try await harness.user("bob")
            let client = try await bob.get("/\(path(message))")
            #expect(client.json?["is_unread"] == asBob.json?["is_unread"])
            #expect(client.json?["recipient_status"] == asBob.json?["recipient_status"])

            #expect(try await api.get("/users/carol/\(path(message))").status == 404)
            #expect(try await api.get("/users/nobody/\(path(message))").status == 404)
            #expect(try await api.get("/users/bob/messages/\(UUID().lowercased)").status == 404)

            // Gone from Bob's devices: gone for Bob, still there for Alice.
            #expect(try await api.delete("/users/bob/\(path(message))?mode=my_devices").status == 204)
            #expect(try await api.get("/users/bob/\(path(message))").status == 404)
            #expect(try await bob.get("/\(path(message))").status == 404)
            #expect(try await api.get("/users/alice/\(path(message))").status == 200)

            // A removed participant keeps what came before, and sees nothing after.
            let before = try await api.send("Before", to: id, sender: senderIdentity("alice"))
            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": "layer:///identities/bob"]]
            #expect(try await api.patch("/\(path(id))", remove).status == 204)
            let after = try await api.send("After", to: id, sender: senderIdentity("alice"))
            #expect(try await api.get("/users/bob/\(path(before))").status == 200)
            #expect(try await api.get("/users/bob/\(path(after))").status == 404)
            #expect(try await bob.get("/\(path(after))").status == 404)
        }
    }

    @Test("Acting as a user: sends as the user under the Client API's rules, de-duplicated by If-None-Match")
    func sendAsUser() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            _ = try await api.conversation(["carol"])
            let route = "/users/alice/\(path(id))/messages"

            let sent = try await api.post(route, .object(textMessage("Sent by the app as Alice")))
            #expect(sent.status == 201)
            let message = try #require(sent.json?["id"]?.stringValue)
            #expect(sent.json?["sender"]?["user_id"] == "alice")
            #expect(sent.json?["is_unread"] == false)
            #expect(sent.json?["recipient_status"]?["layer:///identities/bob"] == "sent")
            #expect(sent.json?["conversation"]?["id"]?.stringValue == id)
            let bob = try await harness.user("bob")
            let seen = try await bob.get("/\(path(message))")
            #expect(seen.json?["sender"]?["user_id"] == "alice")
            #expect(seen.json?["is_unread"] == true)

            // Not a participant: what the Client API answers. Not a user: 404.
            let carol = try await api.post("/users/carol/\(path(id))/messages", .object(textMessage("x")))
            #expect(carol.status == 404)
            #expect(try await api.post("/users/nobody/\(path(id))/messages", .object(textMessage("x"))).status == 404)
            let unknown = "/users/alice/conversations/\(UUID().lowercased)/messages"
            #expect(try await api.post(unknown, .object(textMessage("x"))).status == 404)
            // The user of the path is the sender; the body names none, nor an id.
            let named = try await api.post(route, ["sender_id": "bob", "parts": [["mime_type": "text/plain", "body": "x"]]])
            #expect(named.status == 422)
            #expect(named.errorProperty == "sender_id")
            #expect(
                try await api.post(
                    route, ["id": .string(UUID().lowercased), "parts": [["mime_type": "text/plain", "body": "x"]]]
                ).errorProperty == "id")
            let noParts = try await api.post(route, ["notification": ["text": "x"]])
            #expect(noParts.errorID == "missing_property")
            #expect(noParts.errorProperty == "parts")

            let tag = UUID().lowercased
            let first = try await api.post(route, .object(textMessage("Once")), tag: tag)
            let again = try await api.post(route, .object(textMessage("Once")), tag: tag)
            #expect(first.status == 201)
            #expect(again.status == 201)
            #expect(first.json?["id"] != nil)
            #expect(first.json?["id"] == again.json?["id"])
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "2")

            // A former participant may not write (403), as in the Client API.
            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": "layer:///identities/bob"]]
            #expect(try await api.patch("/\(path(id))", remove).status == 204)
            let former = try await api.post("/users/bob/\(path(id))/messages", .object(textMessage("x")))
            #expect(former.status == 403)
            #expect(former.errorID == "access_denied")
            #expect(try await bob.post("/\(path(id))/messages", .object(textMessage("x"))).status == 403)
        }
    }
}
