import Foundation
import LayerModels
import LayerTesting
import Testing

/// `PATCH /apps/<app>/users/<user>` (the auth service's route) with the block operations of every
/// API version, which reach the blocks the sync service keeps.
@Suite("Blocks through PATCH /apps/<app>/users/<user>")
struct UserPatchTests {
    func blocked(_ api: ServerClient, _ owner: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String]
    {
        let response = try await api.get("/users/\(owner)/blocks")
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        return response.json?.arrayValue?.compactMap { $0["user_id"]?.stringValue } ?? []
    }

    func block(_ operation: String, id user: String) -> JSONValue {
        ["operation": .string(operation), "property": "blocks", "id": .string(LayerID.identity(userID: user))]
    }

    func block(_ operation: String, value user: String) -> JSONValue {
        ["operation": .string(operation), "property": "blocks", "value": .string(user)]
    }

    func setBlocks(_ users: [String]) -> JSONValue {
        ["operation": "set", "property": "blocks", "value": .array(users.map(JSONValue.string))]
    }

    @Test("The 2.0 form (id), the 1.0 form (value), set to [] and to a list: 202, applied in order")
    func forms() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")

            #expect(try await api.patch("/users/alice", [block("add", id: "bob")]).status == 202)
            #expect(try await blocked(api, "alice") == ["bob"])
            #expect(try await api.patch("/users/alice", [block("add", value: "carol")]).status == 202)
            #expect(try await blocked(api, "alice") == ["bob", "carol"])
            #expect(try await api.patch("/users/alice", [block("remove", id: "carol")]).status == 202)
            #expect(try await blocked(api, "alice") == ["bob"])
            let several: JSONValue = [block("remove", value: "bob"), block("add", id: "dave"), block("add", value: "ns/erin")]
            #expect(try await api.patch("/users/alice", several).status == 202)
            #expect(try await blocked(api, "alice") == ["dave", "ns/erin"])
            #expect(try await api.patch("/users/alice", [setBlocks([])]).status == 202)
            #expect(try await blocked(api, "alice") == [])
            // 1.x set a list of user ids (identity ids are understood too).
            #expect(try await api.patch("/users/alice", [setBlocks(["frank", "layer:///identities/gina"])]).status == 202)
            #expect(try await blocked(api, "alice") == ["frank", "gina"])
            #expect(try await api.patch("/users/alice", [setBlocks([]), block("add", id: "bob")]).status == 202)
            #expect(try await blocked(api, "alice") == ["bob"])

            // The block is the one the sync service enforces: Bob's messages are hidden from Alice.
            let conversation = try await api.conversation(["alice", "bob"])
            _ = try await bob.send("Hidden", to: conversation)
            #expect(try await alice.get("/\(path(conversation))/messages").json?.arrayValue == [])

            // Mixed with suspension, and sent as POST with X-HTTP-Method-Override.
            let mixed: JSONValue = [
                ["operation": "set", "property": "suspended", "value": true], block("remove", id: "bob"),
            ]
            let overridden = try await api.request(
                .POST, "/users/alice", mixed, headers: [("X-HTTP-Method-Override", "PATCH")], contentType: MediaType.layerPatch)
            #expect(overridden.status == 202)
            #expect(try await blocked(api, "alice") == [])
            #expect(try await api.get("/users/alice").json?["suspended"] == true)
        }
    }

    @Test("A body with one bad operation changes nothing, and the error names the operation's field")
    func refusals() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            _ = try await harness.user("alice")
            #expect(try await api.patch("/users/alice", [block("add", id: "bob")]).status == 202)
            let suspend: JSONValue = ["operation": "set", "property": "suspended", "value": true]
            let cases: [(body: JSONValue, id: String, property: String)] = [
                ([suspend, block("add", id: "carol"), ["operation": "add", "property": "blocks"]], "missing_property", "2.id"),
                ([suspend, ["operation": "add", "property": "blocks", "value": 5]], "invalid_property", "1.value"),
                (
                    [["operation": "add", "property": "blocks", "id": "layer:///identities/x", "value": "x"]], "invalid_property",
                    "0.id"
                ),
                ([["operation": "add", "property": "blocks", "id": ""]], "invalid_property", "0.id"),
                ([["operation": "set", "property": "blocks", "value": "carol"]], "invalid_property", "0.value"),
                ([["operation": "set", "property": "blocks", "value": ["carol", 1]]], "invalid_property", "0.value.1"),
                ([["operation": "delete", "property": "blocks"]], "invalid_property", "0.operation"),
                ([suspend, ["operation": "add", "property": "colour", "value": "red"]], "invalid_property", "1.property"),
                ([["operation": "set", "property": "suspended", "value": "yes"]], "invalid_property", "0.value"),
                (
                    [setBlocks((0...10_000).map { "user-\($0)" })], "invalid_property", "0.value"
                ),
            ]
            for (body, id, property) in cases {
                let response = try await api.patch("/users/alice", body)
                #expect(response.status == 422, "\(property): \(response.text)")
                #expect(response.errorID == id, "\(property)")
                #expect(response.errorProperty == property, "\(response.text)")
            }
            #expect(try await api.patch("/users/alice", ["operation": "add"]).errorProperty == "body")
            #expect(try await blocked(api, "alice") == ["bob"])
            #expect(try await api.get("/users/alice").json?["suspended"] == false)
            #expect(try await api.patch("/users/nobody", [block("add", id: "bob")]).status == 404)
        }
    }

    @Test("Blocking oneself answers 204 and changes nothing, through PATCH as through POST …/blocks")
    func blockingOneself() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            _ = try await harness.user("alice")
            #expect(try await api.patch("/users/alice", [block("add", id: "alice")]).status == 204)
            #expect(
                try await api.patch("/users/alice", [block("add", value: "alice"), block("remove", id: "alice")]).status == 204)
            #expect(try await blocked(api, "alice") == [])
            #expect(try await api.post("/users/alice/blocks", ["user_id": "alice"]).status == 204)
            #expect(try await blocked(api, "alice") == [])
            // With other operations, those are done (202) and the block of oneself is skipped.
            #expect(try await api.patch("/users/alice", [block("add", id: "alice"), block("add", id: "bob")]).status == 202)
            #expect(try await api.patch("/users/alice", [setBlocks(["alice", "carol"])]).status == 202)
            #expect(try await blocked(api, "alice") == ["carol"])
        }
    }

    @Test("A user the app made through the Server API blocks and is blocked like anyone")
    func serverAPIUser() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            #expect(
                try await api.post("/users/helper/identity", ["display_name": "Helper", "identity_type": "bot"]).status == 201)
            #expect(try await api.patch("/users/helper", [block("add", id: "zed")]).status == 202)
            #expect(try await blocked(api, "helper") == ["zed"])
            _ = try await harness.user("yan")
            #expect(try await api.patch("/users/yan", [block("add", value: "helper")]).status == 202)
            let list = try await api.get("/users/yan/blocks").json?.arrayValue
            #expect(list?.first?["display_name"] == "Helper")
        }
    }
}
