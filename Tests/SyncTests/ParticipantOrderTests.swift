import Foundation
import LayerModels
import LayerTesting
import Testing

/// Participants come back in the order their first writer gave them, those added later after
/// them in the order added: in every view and version, in the changelog, push and exports (the
/// Server API libraries' own suites check the order they sent).
@Suite("The order of participants")
struct ParticipantOrderTests {
    static func userIDs(_ participants: JSONValue?) -> [String] {
        (participants?.arrayValue ?? []).compactMap { $0["user_id"]?.stringValue ?? $0.stringValue }
    }

    @Test("A conversation keeps its participants in the order given, everywhere it is shown")
    func orderEverywhere() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let carol = try await harness.user("carol")
            let socket = try await harness.socket(carol)
            let created = try await api.post("/conversations", ["participants": ["carol", "alice", "bob"], "distinct": false])
            #expect(created.status == 201)
            #expect(Self.userIDs(created.json?["participants"]) == ["carol", "alice", "bob"])
            let conversation = try #require(created.json?["id"]?.stringValue)
            let push = try await socket.next { $0["body"]?["operation"] == "create" }
            #expect(Self.userIDs(push["body"]?["data"]?["participants"]) == ["carol", "alice", "bob"])

            // Added later, in the order added: after the first ones.
            let added: JSONValue = [
                ["operation": "add", "property": "participants", "value": "erin"],
                ["operation": "add", "property": "participants", "value": "dave"],
            ]
            #expect(try await api.patch("/\(path(conversation))", added).status == 204)
            let expected = ["carol", "alice", "bob", "erin", "dave"]
            let update = try await socket.next { $0["body"]?["operation"] == "update" }
            let adds = (update["body"]?["data"]?.arrayValue ?? []).filter { $0["operation"] == "add" }
            #expect(adds.map { $0["value"]?["user_id"]?.stringValue } == ["erin", "dave"])

            for version in ["1.0", "2.0", "3.0"] {
                let accept = APIVersionTests.accept(version)
                let system = try await harness.client.request(
                    .GET, "/apps/\(api.appID)/\(path(conversation))", headers: api.auth, accept: accept)
                #expect(Self.userIDs(system.json?["participants"]) == expected, "system view \(version)")
                let user = try await harness.client.request(
                    .GET, "/apps/\(api.appID)/users/alice/\(path(conversation))", headers: api.auth, accept: accept)
                #expect(Self.userIDs(user.json?["participants"]) == expected, "user view \(version)")
                let client = try await harness.client.request(.GET, "/\(path(conversation))", headers: carol.auth, accept: accept)
                #expect(Self.userIDs(client.json?["participants"]) == expected, "Client API \(version)")
            }
            let list = try await carol.get("/conversations")
            #expect(Self.userIDs(list.json?.arrayValue?.first?["participants"]) == expected)
            let snapshot = try await carol.sync(anchor: 0)
            let operation = snapshot["operations"]?.arrayValue?.first { $0["type"] == "new_conversation" }
            #expect(Self.userIDs(operation?["conversation"]?["participants"]) == expected)

            // A participant who leaves and comes back is added again: at the end.
            #expect(
                try await api.patch(
                    "/\(path(conversation))", [["operation": "remove", "property": "participants", "value": "alice"]]
                )
                .status == 204)
            #expect(
                try await api.patch(
                    "/\(path(conversation))", [["operation": "add", "property": "participants", "value": "alice"]]
                )
                .status == 204)
            let back = try await api.get("/\(path(conversation))")
            #expect(Self.userIDs(back.json?["participants"]) == ["carol", "bob", "erin", "dave", "alice"])
            await socket.close()
        }
    }

    @Test("A creator who did not list themselves comes last; distinct conversations still match by set")
    func creatorAndDistinct() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let created = try await alice.post("/conversations", ["participants": ["carol", "bob"], "distinct": true])
            #expect(created.status == 201)
            #expect(Self.userIDs(created.json?["participants"]) == ["carol", "bob", "alice"])
            let listed = try await alice.post("/conversations", ["participants": ["carol", "alice", "dave"], "distinct": false])
            #expect(Self.userIDs(listed.json?["participants"]) == ["carol", "alice", "dave"])

            // The same set in another order finds the first conversation, in its first writer's order.
            let again = try await alice.post("/conversations", ["participants": ["bob", "alice", "carol"], "distinct": true])
            #expect(again.status == 200)
            #expect(again.json?["id"] == created.json?["id"])
            #expect(Self.userIDs(again.json?["participants"]) == ["carol", "bob", "alice"])
            let api = try await harness.server()
            let fromServer = try await api.post("/conversations", ["participants": ["alice", "carol", "bob"], "distinct": true])
            #expect(fromServer.status == 200)
            #expect(fromServer.json?["id"] == created.json?["id"])
        }
    }

    @Test("Exports list the participants in their order")
    func exportsKeepTheOrder() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let (key, publicPEM) = try ServerAPIExportTests.keyPair()
            #expect(try await api.put("/export_security", ["public_key": .string(publicPEM)]).status == 200)
            let conversation = try await api.conversation(["carol", "alice", "bob"])
            let added: JSONValue = [
                ["operation": "add", "property": "participants", "value": "erin"],
                ["operation": "add", "property": "participants", "value": "dave"],
            ]
            #expect(try await api.patch("/\(path(conversation))", added).status == 204)
            let export = try await ServerAPIExportTests.completed(
                try #require(try await api.post("/exports", [:]).json), api: api)
            let lines = try await ServerAPIExportTests.open(export, api: api, key: key, harness: harness)
            let created = lines.first { $0["event"]?["type"] == "conversation.created" }
            #expect(created?["conversation"]?["participants"] == ["carol", "alice", "bob"])
            let change = lines.first { $0["event"]?["type"] == "conversation.updated.participants" }
            #expect(change?["conversation"]?["participants"] == ["carol", "alice", "bob", "erin", "dave"])
            #expect(change?["changes"]?["added"] == ["erin", "dave"])
        }
    }
}
