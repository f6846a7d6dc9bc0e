import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

extension UserClient {
    /// The user ids or identity ids `GET /following` lists (one page of up to 500).
    func following(accept: String = MediaType.layerJSON) async throws -> [String] {
        let response = try await client.request(.GET, "/following", headers: auth, accept: accept)
        #expect(response.status == 200, "\(response.text)")
        return response.json?.arrayValue?.compactMap(\.stringValue) ?? []
    }
}

/// The path of a follow of `user` (an identity id or a user id), URL-encoded as the SDKs write it.
func followPath(_ user: String) -> String {
    "/following/users/" + (user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? user)
}

@Suite("Following and identities")
struct FollowingTests {
    @Test("Sharing a conversation is a follow both ways for good; explicit follows come and go; nobody follows themselves")
    func implicitAndExplicitFollows() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            _ = try await alice.conversation(with: ["bob"])

            #expect(try await alice.get(followPath("bob")).status == 204)
            #expect(try await bob.get(followPath("alice")).status == 204)
            let none = try await alice.get(followPath("carol"))
            #expect(none.status == 404 && none.errorID == "not_found")
            #expect(try await alice.get("/identities/carol").status == 404, "an identity one does not follow is not readable")

            #expect(try await alice.put(followPath("carol")).status == 204)
            #expect(try await alice.put(followPath("layer:///identities/carol")).status == 204, "following again changes nothing")
            #expect(try await alice.get(followPath(carol.identityID)).status == 204)
            #expect(try await alice.get("/identities/carol").status == 200)
            #expect(try await carol.get(followPath("alice")).status == 404, "a follow is one way")
            #expect(try await carol.get("/identities/alice").status == 404)
            #expect(try await alice.following() == [carol.identityID, bob.identityID])

            let implicit = try await alice.delete(followPath("bob"))
            #expect(implicit.status == 422 && implicit.errorID == "invalid_operation" && implicit.errorProperty == "followed")
            #expect(try await alice.get(followPath("bob")).status == 204, "a conversation's follow stays")

            #expect(try await alice.delete(followPath("carol")).status == 204)
            #expect(try await alice.get(followPath("carol")).status == 404)
            #expect(try await alice.get("/identities/carol").status == 404)
            #expect(try await alice.delete(followPath("carol")).status == 204, "unfollowing again is no error")

            #expect(try await alice.put(followPath("alice")).status == 204)
            #expect(try await alice.get(followPath("alice")).status == 404, "nobody follows themselves")
            #expect(try await alice.delete(followPath("alice")).status == 204)
            #expect(try await alice.get("/identities/alice").status == 200, "one's own identity is always readable")
            #expect(try await alice.following() == [bob.identityID])
        }
    }

    @Test("A participant removed from a conversation still follows those they shared it with, and not who came later")
    func removalKeepsFollows() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let dave = try await harness.user("dave")
            let eve = try await harness.user("eve")
            let conversation = try await alice.conversation(with: ["dave"], distinct: false)
            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": .string(dave.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", remove).status == 204)
            let add: JSONValue = [["operation": "add", "property": "participants", "id": .string(eve.identityID)]]
            #expect(try await alice.patch("/\(path(conversation))", add).status == 204)

            #expect(try await dave.get(followPath("alice")).status == 204)
            #expect(try await dave.get("/identities/alice").status == 200)
            #expect(try await alice.get(followPath("dave")).status == 204)
            #expect(try await dave.get(followPath("eve")).status == 404, "eve came after dave left")
            #expect(try await eve.get(followPath("alice")).status == 204)
            // Who joins reads the history, senders included: they follow those who left too.
            #expect(try await eve.get(followPath("dave")).status == 204)
            let deleteAll = try await dave.delete(followPath("alice"))
            #expect(deleteAll.status == 422, "not even after leaving")
        }
    }

    @Test("GET /identities pages the followed identities newest first with Layer-Count; GET /following has their ids")
    func paging() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            for name in ["u1", "u2", "u3", "u4", "u5"] {
                _ = try await harness.user(name, claims: ["first_name": .string("First \(name)")])
                #expect(try await alice.put(followPath(name)).status == 204)
            }
            #expect(try await alice.put(followPath("ghost")).status == 204, "a user without an identity can be followed")

            let first = try await alice.get("/identities?page_size=2")
            #expect(first.status == 200)
            #expect(first.headers.first(name: "Layer-Count") == "5", "the identity list holds those who have one")
            #expect(listedIDs(first) == ["layer:///identities/u5", "layer:///identities/u4"])
            let identity = try #require(first.json?.arrayValue?.first)
            #expect(identity["first_name"] == "First u5")
            #expect(identity["metadata"] == [:])
            #expect(identity["presence"] == ["status": "offline", "last_seen_at": .null])
            let second = try await alice.get("/identities?page_size=2&from_id=layer:///identities/u4")
            #expect(listedIDs(second) == ["layer:///identities/u3", "layer:///identities/u2"])
            #expect(second.headers.first(name: "Layer-Count") == "5")
            let last = try await alice.get("/identities?page_size=2&from_id=u2")
            #expect(listedIDs(last) == ["layer:///identities/u1"])
            #expect(listedIDs(try await alice.get("/identities")).count == 5, "the default page holds up to 500")

            let ids = try await alice.get("/following?page_size=3")
            #expect(ids.headers.first(name: "Layer-Count") == "6")
            #expect(ids.json == ["layer:///identities/ghost", "layer:///identities/u5", "layer:///identities/u4"])
            let legacy = try await alice.following(accept: "application/vnd.layer+json; version=1.0")
            #expect(legacy == ["ghost", "u5", "u4", "u3", "u2", "u1"], "1.0 names users by user id")

            // The identity of a followed user who signs in later joins the list.
            _ = try await harness.user("ghost")
            let grown = try await alice.get("/identities?page_size=1")
            #expect(grown.headers.first(name: "Layer-Count") == "6")
            #expect(listedIDs(grown) == ["layer:///identities/ghost"])
        }
    }

    @Test("Bad paging, ids and bodies are 4xx naming the field, and change nothing")
    func badInput() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            #expect(try await alice.put(followPath("bob")).status == 204)
            for (query, property) in [
                ("page_size=0", "page_size"), ("page_size=501", "page_size"), ("page_size=x", "page_size"),
                ("from_id=nobody", "from_id"), ("from_id=layer:///identities/", "from_id"),
            ] {
                for list in ["/identities", "/following"] {
                    let response = try await alice.get("\(list)?\(query)")
                    #expect(response.status == 422 && response.errorProperty == property, "\(list)?\(query): \(response.text)")
                }
            }
            let long = String(repeating: "x", count: 129)
            for response in [try await alice.put(followPath(long)), try await alice.get(followPath("layer:///identities/"))] {
                #expect(response.status == 422 && response.errorProperty == "followed", "\(response.text)")
            }
            for (body, property) in [
                (JSONValue.object(["users": ["carol"]]), "body"), (["carol", "", "dave"], "1"), (["carol", 7], "1"),
                (.array(Array(repeating: "carol", count: 1001)), "body"), (["carol", .string(long)], "1"),
            ] {
                let response = try await alice.post("/following/users", body)
                #expect(response.status == 422 && response.errorProperty == property, "\(response.text)")
            }
            let empty = try await alice.client.request(.POST, "/following/users", headers: alice.auth)
            #expect(empty.status == 400)
            #expect(try await alice.following() == [LayerID.identity(userID: "bob")], "nothing was followed")

            let bulk = try await alice.post(
                "/following/users", ["carol", "layer:///identities/dave", ["user_id": "erin"], "alice"])
            #expect(bulk.status == 202)
            #expect(Set(try await alice.following()) == Set(["bob", "carol", "dave", "erin"].map(LayerID.identity(userID:))))
        }
    }

    @Test("Apps never see each other's follows or users")
    func appsApart() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            _ = try await harness.user("bob")
            #expect(try await alice.put(followPath("bob")).status == 204)
            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let foreign = UserClient(
                id: "alice", token: try await harness.fixture.session(user: "alice", app: otherApp), client: harness.client)
            _ = try await UserClient(
                id: "bob", token: try await harness.fixture.session(user: "bob", app: otherApp), client: harness.client
            ).get("/conversations")
            #expect(try await foreign.get(followPath("bob")).status == 404)
            #expect(try await foreign.get("/identities/bob").status == 404)
            #expect(try await foreign.get("/identities").headers.first(name: "Layer-Count") == "0")
            #expect(try await foreign.following() == [])
        }
    }

    @Test("A blocked user reads the blocker's identity without e-mail and phone, one at a time or in the list")
    func blockedUsersReadLess() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let api = try await harness.server()
            let fields: JSONValue = [
                "display_name": "Bob", "email_address": "bob@example.com", "phone_number": "+15550100", "first_name": "Bob",
            ]
            #expect(try await api.put("/users/bob/identity", fields).status == 204)
            #expect(try await api.post("/users/bob/blocks", ["user_id": "alice"]).status == 204)
            #expect(try await alice.put(followPath("bob")).status == 204, "a blocked user may follow the blocker")

            let single = try await alice.get("/identities/bob")
            #expect(single.json?["first_name"] == "Bob")
            #expect(single.json?["email_address"] == .null && single.json?["phone_number"] == .null)
            #expect(single.json?["presence"]?["status"] == "offline")
            let listed = try #require(try await alice.get("/identities").json?.arrayValue?.first)
            #expect(listed["email_address"] == .null && listed["phone_number"] == .null)

            #expect(try await bob.get("/identities/bob").json?["email_address"] == "bob@example.com", "the owner sees it all")
        }
    }

    @Test("Two follows of one user at once both answer 204 and make one follow")
    func concurrentFollows() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            _ = try await harness.user("bob")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<2 { group.addTask { try await alice.put(followPath("bob")).status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == [204, 204])
            let list = try await alice.get("/following")
            #expect(list.headers.first(name: "Layer-Count") == "1")
            #expect(list.json == ["layer:///identities/bob"])
        }
    }

    @Test("Explicit follows stop at 5,000 with 422 naming the field; a follow from a conversation does not count")
    func limit() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            _ = try await alice.conversation(with: ["bob"])
            for batch in 0..<5 {
                let users = (0..<1000).map { JSONValue.string("user-\(batch)-\($0)") }
                #expect(try await alice.post("/following/users", .array(users)).status == 202)
            }
            let over = try await alice.put(followPath("one-more"))
            #expect(over.status == 422 && over.errorID == "invalid_operation" && over.errorProperty == "followed")
            let overBulk = try await alice.post("/following/users", ["one-more", "and-another"])
            #expect(overBulk.status == 422 && overBulk.errorProperty == "body")
            #expect(try await alice.get(followPath("one-more")).status == 404, "nothing of it was kept")
            #expect(try await alice.put(followPath("user-0-0")).status == 204, "following someone followed already is fine")
            #expect(try await alice.put(followPath("bob")).status == 204)
            #expect(try await alice.get("/following?page_size=1").headers.first(name: "Layer-Count") == "5001")
            #expect(try await alice.delete(followPath("user-0-0")).status == 204)
            #expect(try await alice.put(followPath("one-more")).status == 204)
        }
    }
}
