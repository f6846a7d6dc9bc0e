import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Server API identities and blocks")
struct IdentityTests {
    @Test("An identity is created, read, replaced, patched and deleted")
    func lifecycle() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let created = try await api.post(
                "/users/dora/identity",
                [
                    "display_name": "Dora", "first_name": "Dora", "last_name": "Explorer", "email_address": "dora@example.com",
                    "phone_number": "+15550100", "avatar_url": "https://example.com/dora.png", "public_key": "ssh-ed25519 AAAA",
                    "identity_type": "bot", "metadata": ["level": "3"],
                ])
            #expect(created.status == 201)
            #expect(created.body.readableBytes == 0)

            let fetched = try await api.get("/users/dora/identity")
            #expect(fetched.status == 200)
            let identity = try #require(fetched.json)
            #expect(identity["id"] == "layer:///identities/dora")
            #expect(identity["user_id"] == "dora")
            #expect(identity["url"]?.stringValue?.hasSuffix("/apps/\(api.appID)/users/dora/identity") == true)
            #expect(identity["display_name"] == "Dora")
            #expect(identity["last_name"] == "Explorer")
            #expect(identity["email_address"] == "dora@example.com")
            #expect(identity["phone_number"] == "+15550100")
            #expect(identity["avatar_url"] == "https://example.com/dora.png")
            #expect(identity["public_key"] == "ssh-ed25519 AAAA")
            #expect(identity["identity_type"] == "bot")
            #expect(identity["metadata"] == ["level": "3"])

            let duplicate = try await api.post("/users/dora/identity", ["display_name": "Other"])
            #expect(duplicate.status == 409)
            #expect(duplicate.errorID == "conflict")
            #expect(duplicate.json?["data"]?["display_name"] == "Dora")

            #expect(try await api.put("/users/dora/identity", ["display_name": "Dora E."]).status == 204)
            let replaced = try #require(try await api.get("/users/dora/identity").json)
            #expect(replaced["display_name"] == "Dora E.")
            #expect(replaced["first_name"] == .null)
            #expect(replaced["identity_type"] == "user")
            #expect(replaced["metadata"] == [:])

            let patched = try await api.patch(
                "/users/dora/identity",
                [
                    ["operation": "set", "property": "last_name", "value": "Marquez"],
                    ["operation": "set", "property": "metadata.level", "value": "7"],
                    ["operation": "set", "property": "metadata.tier", "value": "gold"],
                    ["operation": "delete", "property": "metadata.tier"],
                    ["operation": "set", "property": "identity_type", "value": "bot"],
                    ["operation": "set", "property": "avatar_url", "value": "https://example.com/d.png"],
                    ["operation": "delete", "property": "avatar_url"],
                ])
            #expect(patched.status == 204)
            let after = try #require(try await api.get("/users/dora/identity").json)
            #expect(after["last_name"] == "Marquez")
            #expect(after["metadata"] == ["level": "7"])
            #expect(after["identity_type"] == "bot")
            #expect(after["avatar_url"] == .null)
            #expect(after["display_name"] == "Dora E.")

            // A patch is applied whole or not at all.
            let refused = try await api.patch(
                "/users/dora/identity",
                [
                    ["operation": "set", "property": "last_name", "value": "Changed"],
                    ["operation": "delete", "property": "display_name"],
                ])
            #expect(refused.status == 422)
            #expect(refused.errorProperty == "display_name")
            #expect(try await api.get("/users/dora/identity").json?["last_name"] == "Marquez")
            let nested = try await api.patch(
                "/users/dora/identity", [["operation": "set", "property": "metadata.a.b", "value": "c"]])
            #expect(nested.errorProperty == "metadata.a.b")
            let fixed = try await api.patch(
                "/users/dora/identity", [["operation": "set", "property": "user_id", "value": "eve"]])
            #expect(fixed.status == 422)
            #expect(fixed.errorProperty == "user_id")
            let added = try await api.patch(
                "/users/dora/identity", [["operation": "add", "property": "first_name", "value": "x"]])
            #expect(added.errorProperty == "first_name")
            let tooLong = try await api.patch(
                "/users/dora/identity",
                [["operation": "set", "property": "phone_number", "value": .string(String(repeating: "1", count: 33))]])
            #expect(tooLong.errorProperty == "phone_number")
            let wrongType = try await api.request(
                .PATCH, "/users/dora/identity", [["operation": "set", "property": "last_name", "value": "x"]])
            #expect(wrongType.status == 406)

            #expect(try await api.delete("/users/dora/identity").status == 204)
            #expect(try await api.get("/users/dora/identity").status == 404)
            #expect(try await api.delete("/users/dora/identity").status == 404)
            #expect(try await api.put("/users/dora/identity", ["display_name": "Dora"]).status == 404)
            #expect(
                try await api.patch("/users/dora/identity", [["operation": "set", "property": "last_name", "value": "x"]]).status
                    == 404)
            #expect(try await api.post("/users/dora/identity", ["display_name": "Dora again"]).status == 201)

            // User ids are URL-encoded in paths.
            #expect(try await api.post("/users/ns%2F12345/identity", ["display_name": "Namespaced"]).status == 201)
            let namespaced = try await api.get("/users/ns%2F12345/identity")
            #expect(namespaced.json?["user_id"] == "ns/12345")
            #expect(namespaced.json?["id"] == "layer:///identities/ns%2F12345")
        }
    }

    @Test("An identity read with GET can be sent back with PUT; read-only fields must name the same user")
    func putWhatWasRead() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            #expect(try await api.post("/users/erin/identity", ["display_name": "Erin", "last_name": "Brock"]).status == 201)
            guard case .object(var read)? = try await api.get("/users/erin/identity").json else {
                Issue.record("no identity")
                return
            }
            #expect(read["user_id"] == "erin" && read["id"] != nil && read["url"] != nil)
            read["display_name"] = "Erin B."
            #expect(try await api.put("/users/erin/identity", .object(read)).status == 204)
            let after = try await api.get("/users/erin/identity")
            #expect(after.json?["display_name"] == "Erin B.")
            #expect(after.json?["last_name"] == "Brock")

            // A read-only field that names someone else is refused, and nothing changes.
            for (property, value) in [("user_id", "frank"), ("id", "layer:///identities/frank")] {
                var other = read
                other[property] = .string(value)
                other["display_name"] = "Frank"
                let refused = try await api.put("/users/erin/identity", .object(other))
                #expect(refused.status == 422)
                #expect(refused.errorProperty == property)
            }
            #expect(try await api.get("/users/erin/identity").json?["display_name"] == "Erin B.")
        }
    }

    @Test("An empty array where an object belongs is 422 naming the body, and changes nothing")
    func arrayForAnObject() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            for response in [
                try await api.post("/conversations", []), try await api.put("/users/alice/identity", []),
                try await alice.post("/conversations", []),
            ] {
                #expect(response.status == 422)
                #expect(response.errorID == "invalid_property")
                #expect(response.errorProperty == "body")
            }
            #expect(try await alice.get("/conversations").json == [])
        }
    }

    @Test("Invalid identity fields are refused with the field named, and nothing is stored")
    func validation() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            func long(_ count: Int) -> JSONValue { .string(String(repeating: "a", count: count)) }
            let cases: [(body: JSONValue, id: String, property: String)] = [
                (["first_name": "Ann"], "missing_property", "display_name"),
                (["display_name": long(129)], "invalid_property", "display_name"),
                (["display_name": "  "], "invalid_property", "display_name"),
                (["display_name": "A\u{0}B"], "invalid_property", "display_name"),
                (["display_name": "Ann", "avatar_url": long(1025)], "invalid_property", "avatar_url"),
                (["display_name": "Ann", "first_name": long(129)], "invalid_property", "first_name"),
                (["display_name": "Ann", "last_name": long(129)], "invalid_property", "last_name"),
                (["display_name": "Ann", "phone_number": long(33)], "invalid_property", "phone_number"),
                (
                    ["display_name": "Ann", "email_address": .string(String(repeating: "a", count: 250) + "@b.com")],
                    "invalid_property", "email_address"
                ),
                (["display_name": "Ann", "email_address": "not-an-address"], "invalid_property", "email_address"),
                (["display_name": "Ann", "identity_type": "robot"], "invalid_property", "identity_type"),
                (
                    [
                        "display_name": "Ann",
                        "metadata": .object(Dictionary(uniqueKeysWithValues: (0..<17).map { ("k\($0)", JSONValue.string("v")) })),
                    ], "invalid_property", "metadata"
                ),
                (["display_name": "Ann", "metadata": ["level": 3]], "invalid_property", "metadata.level"),
                (["display_name": "Ann", "nickname": "Annie"], "invalid_property", "nickname"),
                (["display_name": 7], "invalid_property", "display_name"),
            ]
            for (body, id, property) in cases {
                let response = try await api.post("/users/ann/identity", body)
                #expect(response.status == 422, "\(body)")
                #expect(response.errorID == id, "\(body)")
                #expect(response.errorProperty == property, "\(body)")
            }
            #expect(try await api.get("/users/ann/identity").status == 404)

            let limits = try await api.post(
                "/users/ann/identity",
                [
                    "display_name": long(128), "avatar_url": long(1024), "first_name": long(128), "last_name": long(128),
                    "phone_number": long(32), "email_address": .string(String(repeating: "a", count: 249) + "@b.com"),
                    "metadata": .object(Dictionary(uniqueKeysWithValues: (0..<16).map { ("k\($0)", JSONValue.string("v")) })),
                ])
            #expect(limits.status == 201)
            let replaced = try await api.put("/users/ann/identity", ["last_name": "Lee"])
            #expect(replaced.status == 422)
            #expect(replaced.errorProperty == "display_name")
            #expect(try await api.get("/users/ann/identity").json?["display_name"] == long(128))
        }
    }

    @Test("Identities set by the backend show in conversations and to other participants")
    func identityInConversations() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            #expect(
                try await api.post("/users/erin/identity", ["display_name": "Erin", "avatar_url": "https://e.example/a.png"])
                    .status == 201)
            let alice = try await harness.user("alice")
            let id = try await alice.conversation(with: ["erin"])
            let conversation = try await api.get("/\(path(id))")
            let erin = conversation.json?["participants"]?.arrayValue?.first { $0["user_id"] == "erin" }
            #expect(erin?["display_name"] == "Erin")
            #expect(erin?["avatar_url"] == "https://e.example/a.png")
            let seen = try await alice.get("/identities/erin")
            #expect(seen.status == 200)
            #expect(seen.json?["display_name"] == "Erin")

            // Membership of a conversation makes a user exist, with an identity to fill in later.
            _ = try await api.conversation(["frank"])
            let implicit = try await api.get("/users/frank/identity")
            #expect(implicit.status == 200)
            #expect(implicit.json?["display_name"] == .null)
            #expect(try await api.post("/users/frank/identity", ["display_name": "Frank"]).status == 409)
            #expect(try await api.put("/users/frank/identity", ["display_name": "Frank"]).status == 204)
            #expect(try await api.get("/users/frank/identity").json?["display_name"] == "Frank")
        }
    }

    @Test("Blocks are listed, added and lifted; a blocker no longer sees the blocked user's messages")
    func blocks() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            #expect(try await api.post("/users/mallory/identity", ["display_name": "Mallory"]).status == 201)
            let id = try await api.conversation(["alice", "bob"])

            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)
            #expect(try await api.post("/users/alice/blocks", ["id": "layer:///identities/mallory"]).status == 204)
            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob"]).status == 204)
            let list = try await api.get("/users/alice/blocks")
            #expect(list.status == 200)
            let blocked = list.json?.arrayValue ?? []
            #expect(blocked.compactMap { $0["user_id"]?.stringValue } == ["bob", "mallory"])
            #expect(blocked.last?["id"] == "layer:///identities/mallory")
            #expect(blocked.last?["display_name"] == "Mallory")
            #expect(try await api.get("/users/bob/blocks").json?.arrayValue == [])

            // Bob's messages are hidden from Alice, and from her only.
            let hidden = try await bob.send("Can you see this?", to: id)["id"]?.stringValue
            #expect(listedIDs(try await api.get("/users/alice/\(path(id))/messages")) == [])
            #expect(try await alice.get("/\(path(id))/messages").json?.arrayValue?.isEmpty == true)
            #expect(listedIDs(try await api.get("/users/bob/\(path(id))/messages")) == [hidden].compactMap { $0 })
            #expect(listedIDs(try await api.get("/\(path(id))/messages")) == [hidden].compactMap { $0 })
            // Nor can Alice add Bob to a conversation of hers.
            let refused = try await alice.post("/conversations", ["participants": ["bob"], "distinct": false])
            #expect(refused.status == 422)
            #expect(refused.errorID == "participant_blocked")

            // Blocking oneself answers as a block does (the original's own client suite expects
            // it), and changes nothing.
            #expect(try await api.post("/users/alice/blocks", ["user_id": "alice"]).status == 204)
            let unchanged = try await api.get("/users/alice/blocks").json?.arrayValue?.compactMap { $0["user_id"]?.stringValue }
            #expect(unchanged == ["bob", "mallory"])
            #expect(try await api.post("/users/alice/blocks", [:]).errorID == "missing_property")
            #expect(try await api.post("/users/alice/blocks", ["user_id": "bob", "id": "layer:///identities/bob"]).status == 422)
            #expect(try await api.post("/users/alice/blocks", ["name": "bob"]).errorProperty == "name")
            #expect(try await api.post("/users/nobody/blocks", ["user_id": "bob"]).status == 404)

            #expect(try await api.delete("/users/alice/blocks/bob").status == 204)
            #expect(try await api.delete("/users/alice/blocks/bob").status == 204)
            #expect(try await api.delete("/users/alice/blocks/layer%3A%2F%2F%2Fidentities%2Fmallory").status == 204)
            #expect(try await api.get("/users/alice/blocks").json?.arrayValue == [])
            let visible = try await bob.send("And now?", to: id)["id"]?.stringValue
            #expect(listedIDs(try await api.get("/users/alice/\(path(id))/messages")).contains(visible ?? "-"))
            #expect(try await alice.post("/conversations", ["participants": ["bob"], "distinct": false]).status == 201)
        }
    }

    @Test("Requests on behalf of a user who does not exist are 404")
    func unknownUsers() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice"])
            let message = try await api.send("Hi", to: id, sender: senderIdentity("alice"))
            let responses = [
                try await api.get("/users/nobody/identity"),
                try await api.put("/users/nobody/identity", ["display_name": "N"]),
                try await api.patch("/users/nobody/identity", [["operation": "set", "property": "last_name", "value": "x"]]),
                try await api.delete("/users/nobody/identity"),
                try await api.get("/users/nobody/blocks"),
                try await api.post("/users/nobody/blocks", ["user_id": "alice"]),
                try await api.delete("/users/nobody/blocks/alice"),
                try await api.get("/users/nobody/conversations"),
                try await api.get("/users/nobody/\(path(id))"),
                try await api.get("/users/nobody/\(path(id))/messages"),
                try await api.post("/users/nobody/\(path(id))/mark_all_read", [:]),
                try await api.post("/users/nobody/\(path(message))/receipts", ["type": "read"]),
                try await api.delete("/users/nobody/\(path(message))?mode=my_devices"),
            ]
            for response in responses {
                #expect(response.status == 404)
                #expect(response.errorID == "not_found")
            }
        }
    }
}
