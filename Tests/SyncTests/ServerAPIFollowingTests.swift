import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Following through the Server API")
struct ServerAPIFollowingTests {
    @Test("The app's backend follows and unfollows for a user, lists whom they follow and reads those identities as they do")
    func followingForAUser() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            _ = try await harness.user("bob", claims: ["first_name": "Bob"])
            _ = try await alice.conversation(with: ["carol"])
            let api = try await harness.server()
            let socket = try await harness.socket(alice)

            #expect(try await api.request(.PUT, "/users/alice/following/bob").status == 204)
            let created = try await socket.change("create", "Identity")
            #expect(created["body"]?["data"]?["id"] == "layer:///identities/bob")
            #expect(try await alice.get(followPath("bob")).status == 204, "the user's own API sees the follow")
            #expect(try await api.get("/users/alice/following/bob").status == 204)
            #expect(try await api.get("/users/alice/following/layer%3A%2F%2F%2Fidentities%2Fcarol").status == 204)
            #expect(try await api.get("/users/alice/following/dora").status == 404)
            #expect(try await api.post("/users/alice/following", ["dora", "layer:///identities/erin"]).status == 202)

            let ids = try await api.get("/users/alice/following")
            #expect(ids.status == 200)
            #expect(ids.headers.first(name: "Layer-Count") == "4")
            #expect(
                Set(ids.json?.arrayValue ?? [])
                    == Set(["bob", "carol", "dora", "erin"].map { .string(LayerID.identity(userID: $0)) }))
            let legacy = try await api.request(
                .GET, "/users/alice/following", headers: [("Accept", "application/vnd.layer+json; version=1.0")])
            #expect(Set(legacy.json?.arrayValue ?? []) == ["bob", "carol", "dora", "erin"])

            let identities = try await api.get("/users/alice/identities?page_size=1")
            #expect(identities.status == 200)
            #expect(identities.headers.first(name: "Layer-Count") == "2", "bob and carol have identities")
            let bob = try #require(
                try await api.get("/users/alice/identities?from_id=erin").json?.arrayValue?.first {
                    $0["user_id"] == "bob"
                })
            #expect(bob["first_name"] == "Bob")
            #expect(bob["url"] == .string("\(harness.client.baseURL)/apps/\(api.appID)/users/bob/identity"))
            #expect(bob["presence"]?["status"] == "offline")

            let implicit = try await api.delete("/users/alice/following/carol")
            #expect(implicit.status == 422 && implicit.errorProperty == "followed")
            #expect(try await api.delete("/users/alice/following/bob").status == 204)
            #expect(try await socket.change("delete", "Identity")["body"]?["object"]?["id"] == "layer:///identities/bob")
            #expect(try await api.get("/users/alice/following/bob").status == 404)
            await socket.close()
        }
    }

    @Test("Following routes of a user who does not exist are 404; bad ids and bodies 422 naming the field")
    func unknownUsersAndBadInput() async throws {
        try await SyncHarness.run { harness in
            _ = try await harness.user("alice")
            let api = try await harness.server()
            for response in [
                try await api.get("/users/nobody/following"), try await api.get("/users/nobody/identities"),
                try await api.get("/users/nobody/following/alice"), try await api.request(.PUT, "/users/nobody/following/alice"),
                try await api.delete("/users/nobody/following/alice"), try await api.post("/users/nobody/following", ["alice"]),
            ] {
                #expect(response.status == 404 && response.errorID == "not_found", "\(response.text)")
            }
            #expect(try await api.get("/users/alice/following/alice").status == 404, "nobody follows themselves")
            let long = String(repeating: "x", count: 129)
            let badPath = try await api.request(.PUT, "/users/alice/following/\(long)")
            #expect(badPath.status == 422 && badPath.errorProperty == "followed")
            let badBody = try await api.post("/users/alice/following", ["bob", ["name": "x"]])
            #expect(badBody.status == 422 && badBody.errorProperty == "1")
            let badPage = try await api.get("/users/alice/identities?page_size=1000")
            #expect(badPage.status == 422 && badPage.errorProperty == "page_size")
            #expect(try await api.get("/users/alice/following").json == [], "nothing was followed")
        }
    }
}
