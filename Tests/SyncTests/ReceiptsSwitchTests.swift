import Foundation
import LayerModels
import LayerTesting
import Testing

/// A conversation created with `"receipts_enabled": false`: nobody sees the others' delivery and
/// read states, no receipt reaches the others' changelogs, and each participant's own read state
/// and unread counts still work.
@Suite("The receipts switch")
struct ReceiptsSwitchTests {
    static func create(_ user: UserClient, with others: [String], receipts: Bool?) async throws -> String {
        var body: [String: JSONValue] = [
            "participants": .array(others.map { .string(LayerID.identity(userID: $0)) }), "distinct": false,
        ]
        if let receipts { body["receipts_enabled"] = .bool(receipts) }
        let created = try await user.post("/conversations", .object(body))
        #expect(created.status == 201, "\(created.text)")
        #expect(created.json?["receipts_enabled"] == .bool(receipts ?? true))
        return try #require(created.json?["id"]?.stringValue)
    }

    /// The `update_status` operations of `user`'s changelog after `anchor`, as `user_id: status`.
    static func statusChanges(_ user: UserClient, after anchor: JSONValue) async throws -> [String] {
        try await user.catchUp(from: anchor).operations.filter { $0["type"] == "update_status" }.map {
            "\($0["user_id"]?.stringValue ?? $0["data"]?["user_id"]?.stringValue ?? "?"): \($0["status"]?.stringValue ?? $0["data"]?["status"]?.stringValue ?? "?")"
        }
    }

    @Test("Switched off: each sees only their own status, the others hear of no receipt, unread counts still work")
    func receiptsOff() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await Self.create(alice, with: ["bob", "carol"], receipts: false)
            #expect(try await bob.get("/\(path(conversation))").json?["receipts_enabled"] == false)
            let aliceAnchor = try await alice.sync()["anchor"] ?? 0
            let carolAnchor = try await carol.sync()["anchor"] ?? 0
            let bobAnchor = try await bob.sync()["anchor"] ?? 0

            let first = try #require(try await alice.send("one", to: conversation)["id"]?.stringValue)
            let second = try #require(try await alice.send("two", to: conversation)["id"]?.stringValue)
            #expect(try await bob.get("/\(path(conversation))").json?["unread_message_count"] == 2)
            #expect(try await bob.post("/\(path(first))/receipts", ["type": "read"]).status == 204)
            #expect(try await carol.post("/\(path(conversation))/mark_all_read", [:]).status == 204)

            // Bob sees his own reading; his unread count follows it.
            let bobsView = try #require(try await bob.get("/\(path(first))").json)
            #expect(bobsView["is_unread"] == false)
            #expect(bobsView["recipient_status"]?[bob.identityID] == "read")
            #expect(bobsView["recipient_status"]?[carol.identityID] == "sent", "not Carol's reading")
            #expect(try await bob.get("/\(path(conversation))").json?["unread_message_count"] == 1)
            #expect(try await carol.get("/\(path(conversation))").json?["unread_message_count"] == 0)
            // Alice, the sender, sees nobody's.
            for id in [first, second] {
                let status = try #require(try await alice.get("/\(path(id))").json?["recipient_status"])
                #expect(status[alice.identityID] == "read")
                #expect(status[bob.identityID] == "sent" && status[carol.identityID] == "sent", "\(status)")
            }
            // Only the reader's own changelog (and so their own devices) hears of a reading.
            #expect(try await Self.statusChanges(alice, after: aliceAnchor).isEmpty)
            #expect(try await Self.statusChanges(carol, after: carolAnchor) == ["carol: read"])
            #expect(try await Self.statusChanges(bob, after: bobAnchor) == ["bob: read"])

            // The app's backend still sees every status.
            let server = try await harness.server()
            let system = try await server.get("/\(path(conversation))/messages").json?.arrayValue?.last
            #expect(system?["recipient_status"]?[bob.identityID] == "read")
        }
    }

    @Test("On by default, and then every participant sees and hears of the others' receipts as before")
    func receiptsOnByDefault() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await Self.create(alice, with: ["bob"], receipts: nil)
            let anchor = try await alice.sync()["anchor"] ?? 0
            let message = try #require(try await alice.send("hi", to: conversation)["id"]?.stringValue)
            #expect(try await bob.post("/\(path(message))/receipts", ["type": "read"]).status == 204)
            #expect(try await alice.get("/\(path(message))").json?["recipient_status"]?[bob.identityID] == "read")
            #expect(try await Self.statusChanges(alice, after: anchor) == ["bob: read"])
            let server = try await harness.server()
            let made = try await server.post(
                "/conversations", ["participants": ["alice", "bob"], "distinct": false, "receipts_enabled": false])
            #expect(made.status == 201)
            #expect(made.json?["receipts_enabled"] == false)
        }
    }

    @Test("receipts_enabled must be a boolean; a wrong one is 422 naming it and creates nothing")
    func badSwitch() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let refused = try await alice.post(
                "/conversations", ["participants": ["layer:///identities/bob"], "receipts_enabled": "no"])
            #expect(refused.status == 422, "\(refused.text)")
            #expect(refused.errorProperty == "receipts_enabled")
            #expect(try await alice.get("/conversations").json == [])
        }
    }
}
