import Foundation
import LayerModels
import LayerTesting
import Testing

/// The operations of a user's changelog after `anchor`, as (type, object id) pairs.
private func changes(_ user: UserClient, after anchor: JSONValue) async throws -> (ops: [(String, String)], anchor: JSONValue) {
    let (operations, next) = try await user.catchUp(from: anchor)
    let ops = operations.map { operation in
        (
            operation["type"]?.stringValue ?? "?",
            operation["message_id"]?.stringValue ?? operation["conversation_id"]?.stringValue ?? "?"
        )
    }
    return (ops, next)
}

@Suite("Changelog")
struct ChangelogTests {
    @Test("Every REST write reaches the changelogs of exactly the users who may see it")
    func fanOut() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let dave = try await harness.user("dave")
            let everyone = [alice, bob, carol, dave]
            // Anchor 0 asks for a snapshot; start every user from a real position in their changelog.
            _ = try await alice.conversation(with: ["bob", "carol", "dave"])
            var anchors: [String: JSONValue] = [:]
            for user in everyone { anchors[user.id] = try await user.sync(anchor: 0)["anchor"] ?? 0 }

            /// Asserts which users got which operation since the last check.
            func expectChanges(_ expected: [String: [(String, String)]], _ comment: Comment) async throws {
                for user in everyone {
                    let (ops, next) = try await changes(user, after: anchors[user.id]!)
                    anchors[user.id] = next
                    let want = expected[user.id] ?? []
                    #expect(ops.map(\.0) == want.map(\.0), "\(user.id): \(comment)")
                    #expect(ops.map(\.1) == want.map(\.1), "\(user.id): \(comment)")
                }
            }

            let conversation = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            let created = [("new_conversation", conversation)]
            try await expectChanges(["alice": created, "bob": created, "carol": created], "create")

            let message = try await bob.send("hello", to: conversation)["id"]!.stringValue!
            let sent = [("new_message", message)]
            try await expectChanges(["alice": sent, "bob": sent, "carol": sent], "send")

            #expect(try await carol.post("/\(path(message))/receipts", ["type": "read"]).status == 204)
            let status = [("update_status", message)]
            try await expectChanges(["alice": status, "bob": status, "carol": status], "receipt")

            #expect(try await alice.delete("/\(path(message))?mode=my_devices").status == 204)
            try await expectChanges(["alice": [("delete_message", message)]], "delete from my devices")

            #expect(
                try await alice.patch("/\(path(conversation))", [["operation": "set", "property": "metadata.t", "value": "x"]])
                    .status == 204)
            let updated = [("update_conversation", conversation)]
            try await expectChanges(["alice": updated, "bob": updated, "carol": updated], "metadata")

            #expect(
                try await alice.patch(
                    "/\(path(conversation))", [["operation": "set", "property": "private_metadata.p", "value": "x"]]
                ).status == 204)
            try await expectChanges(["alice": updated], "private metadata")

            #expect(
                try await alice.patch(
                    "/\(path(conversation))",
                    [
                        ["operation": "add", "property": "participants", "value": "dave"],
                        ["operation": "remove", "property": "participants", "value": "carol"],
                    ]
                ).status == 204)
            try await expectChanges(
                ["alice": updated, "bob": updated, "carol": updated, "dave": created], "participants")

            let second = try await dave.send("hi all", to: conversation)["id"]!.stringValue!
            let secondSent = [("new_message", second)]
            try await expectChanges(["alice": secondSent, "bob": secondSent, "dave": secondSent], "send after removal")

            #expect(try await dave.delete("/\(path(second))?mode=all_participants").status == 204)
            let deleted = [("delete_message", second)]
            try await expectChanges(["alice": deleted, "bob": deleted, "dave": deleted], "delete for all")

            #expect(try await bob.post("/\(path(conversation))/mark_all_read", [:]).status == 204)
            let allRead = [("update_status", conversation)]
            try await expectChanges(["alice": allRead, "bob": allRead, "dave": allRead], "mark all read")

            #expect(try await bob.delete("/\(path(conversation))?mode=all_participants").status == 204)
            // Gone for everybody: Carol, removed earlier, loses the copy she kept too.
            let gone = [("delete_conversation", conversation)]
            try await expectChanges(["alice": gone, "bob": gone, "carol": gone, "dave": gone], "delete conversation")
        }
    }

    @Test("All devices of a user share one changelog, and each sees its own changes")
    func devicesShareChangelog() async throws {
        try await SyncHarness.run { harness in
            let phone = try await harness.user("alice")
            let laptop = try await harness.user("alice")
            let conversation = try await phone.conversation(with: ["bob"])
            let message = try await phone.send("from my phone", to: conversation)["id"]!.stringValue!
            let (phoneOps, _) = try await changes(phone, after: 0)
            let (laptopOps, _) = try await changes(laptop, after: 0)
            #expect(phoneOps.map(\.1) == laptopOps.map(\.1))
            #expect(laptopOps.contains { $0.0 == "new_message" && $0.1 == message })
        }
    }

    @Test("Operations carry increasing seqs; the anchor moves to the last one; limit and more page a catch-up")
    func pagingCatchUp() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let start = try await alice.sync(anchor: 0)["anchor"]!
            #expect(start == 1)
            for index in 0..<7 { _ = try await alice.send("m\(index)", to: conversation) }
            let first = try await alice.sync(anchor: start, limit: 3)
            #expect(first["more"] == true)
            let ops = try #require(first["operations"]?.arrayValue)
            #expect(ops.count == 3)
            let seqs = ops.compactMap { $0["seq"]?.intValue }
            #expect(seqs == Array((start.intValue! + 1)...(start.intValue! + 3)))
            #expect(first["anchor"]?.intValue == seqs.last)
            #expect(ops[0]["message"]?["parts"]?.arrayValue?.first?["body"] == "m0")
            #expect(ops[1]["parts"]?.arrayValue?.first?["mime_type"] == "text/plain")
            let rest = try await alice.catchUp(from: first["anchor"]!, limit: 3)
            #expect(rest.operations.count == 4)
            let none = try await alice.sync(anchor: rest.anchor)
            #expect(none["operations"]?.arrayValue?.isEmpty == true)
            #expect(none["more"] == false)
            #expect(none["anchor"] == rest.anchor)
        }
    }

    @Test("Anchor 0 returns the latest state, one operation per object, under each policy")
    func snapshotPolicies() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            var messages: [String] = []
            for index in 0..<6 { messages.append(try await alice.send("m\(index)", to: conversation)["id"]!.stringValue!) }
            #expect(
                try await alice.patch("/\(path(conversation))", [["operation": "set", "property": "metadata.t", "value": "x"]])
                    .status == 204)
            // Bob has read up to the third message.
            #expect(try await bob.post("/\(path(conversation))/mark_all_read", ["position": 3]).status == 204)

            func snapshot(_ policy: String?, partial: Int? = nil) async throws -> [JSONValue] {
                try await bob.sync(anchor: 0, policy: policy, partialCount: partial)["operations"]?.arrayValue ?? []
            }
            let complete = try await snapshot("complete")
            #expect(complete.map { $0["type"]?.stringValue } == ["new_conversation"] + Array(repeating: "new_message", count: 6))
            #expect(complete[0]["conversation"]?["metadata"]?["t"] == "x")
            #expect(complete.dropFirst().map { $0["message_id"]?.stringValue } == messages)
            #expect(complete[1]["message"]?["is_unread"] == false)
            #expect(complete[4]["message"]?["is_unread"] == true)

            let unread = try await snapshot(nil)
            #expect(unread.dropFirst().map { $0["message_id"]?.stringValue } == Array(messages[3...]))
            let partial = try await snapshot("partial", partial: 2)
            #expect(partial.dropFirst().map { $0["message_id"]?.stringValue } == Array(messages[4...]))

            // When everything is read, unread_only still brings the last message.
            #expect(try await bob.post("/\(path(conversation))/mark_all_read", [:]).status == 204)
            let allRead = try await snapshot("unread_only")
            #expect(allRead.dropFirst().map { $0["message_id"]?.stringValue } == [messages[5]])
        }
    }

    @Test("Anchor 0 carries the user's own tags as the changelog gave them, so a new device learns them too")
    func snapshotTags() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            var messages: [String] = []
            for index in 0..<4 { messages.append(try await alice.send("m\(index)", to: conversation)["id"]!.stringValue!) }
            func tag(_ message: String, _ tags: JSONValue) async throws {
                _ = try await bob.sync(
                    anchor: 0, operations: [["type": "update_tags", "message_id": .string(message), "tags": tags]])
            }
            try await tag(messages[0], ["starred"])
            try await tag(messages[2], ["important"])
            try await tag(messages[2], ["starred"])
            try await tag(messages[3], ["deleted"])
            // Bob's old device learnt his tags from his changelog: the last update_tags of each message.
            let (changelog, _) = try await bob.catchUp(from: 1)
            var learnt: [String: JSONValue] = [:]
            for operation in changelog where operation["type"] == "update_tags" {
                learnt[operation["message_id"]!.stringValue!] = operation["tags"]
            }
            #expect(learnt.count == 3)

            // His new device: each visible message, with his tags of it when he has any.
            let snapshot = try #require(try await bob.sync(anchor: 0, policy: "complete")["operations"]?.arrayValue)
            #expect(
                snapshot.map { "\($0["type"]?.stringValue ?? "?") \($0["message_id"]?.stringValue ?? "-")" } == [
                    "new_conversation -", "new_message \(messages[0])", "new_message \(messages[1])",
                    "new_message \(messages[2])",
                ])
            for operation in snapshot.dropFirst() {
                let message = operation["message_id"]!.stringValue!
                #expect(operation["tags"] == learnt[message], "\(message)")
                #expect(operation["conversation_id"]?.stringValue == conversation)
                #expect(operation["seq"] == snapshot[0]["seq"])
            }
            #expect(learnt[messages[3]] == ["deleted"], "a message tagged deleted is gone from his devices")

            // Tags of messages older than what the policy brings come too, for the history read later.
            #expect(try await bob.post("/\(path(conversation))/mark_all_read", ["position": 3]).status == 204)
            let unread = try #require(try await bob.sync(anchor: 0, policy: "unread_only")["operations"]?.arrayValue)
            #expect(
                unread.map { "\($0["type"]?.stringValue ?? "?") \($0["message_id"]?.stringValue ?? "-")" } == [
                    "new_conversation -", "update_tags \(messages[0])", "new_message \(messages[2])",
                ])
            #expect(unread[1]["tags"] == learnt[messages[0]])
            #expect(unread[2]["tags"] == learnt[messages[2]])
            // Tags are the user's own: Alice's new device gets none of Bob's.
            let aliceSnapshot = try await alice.sync(anchor: 0, policy: "complete")["operations"]?.arrayValue ?? []
            #expect(!aliceSnapshot.contains { $0["type"] == "update_tags" || $0["tags"] != nil })
        }
    }

    @Test("Anchor 0 gives one operation per message, tagged ones inside and outside the window, on pages of any limit")
    func snapshotTagsOncePerMessage() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            var tagged: [String: JSONValue] = [:]
            var conversations: [String] = []
            for round in 0..<2 {
                let conversation = try await alice.conversation(with: ["bob"], distinct: false)
                conversations.append(conversation)
                var messages: [String] = []
                for index in 0..<8 { messages.append(try await alice.send("m\(index)", to: conversation)["id"]!.stringValue!) }
                // Read up to the fifth: the unread window starts at the sixth (the partial one of 3, too).
                #expect(try await bob.post("/\(path(conversation))/mark_all_read", ["position": 5]).status == 204)
                for index in [1, 4, 5, 7] {
                    let tags: JSONValue = [.string("r\(round)"), "starred"]
                    _ = try await bob.sync(
                        anchor: 0, operations: [["type": "update_tags", "message_id": .string(messages[index]), "tags": tags]])
                    tagged[messages[index]] = tags
                }
            }
            for policy in ["complete", "unread_only", "partial"] {
                for limit in [1, 2, 3, 500] {
                    var operations: [JSONValue] = []
                    var anchor: JSONValue = 0
                    repeat {
                        let page = try await bob.sync(anchor: anchor, limit: limit, policy: policy, partialCount: 3)
                        operations += page["operations"]?.arrayValue ?? []
                        anchor = page["anchor"] ?? 0
                        if page["more"] != true { break }
                    } while true
                    let ids = operations.map { $0["message_id"]?.stringValue ?? $0["conversation_id"]?.stringValue ?? "?" }
                    #expect(ids.count == Set(ids).count, "\(policy), limit \(limit): an object twice in \(ids)")
                    #expect(Set(ids).isSuperset(of: conversations), "\(policy), limit \(limit)")
                    // Every tag reaches the new device once: with its message, or alone for an older one.
                    var learnt: [String: JSONValue] = [:]
                    for operation in operations where operation["tags"] != nil {
                        learnt[operation["message_id"]!.stringValue!] = operation["tags"]
                        let inWindow = operation["type"] == "new_message"
                        #expect(inWindow || operation["type"] == "update_tags")
                    }
                    #expect(learnt == tagged, "\(policy), limit \(limit)")
                    let sent = operations.filter { $0["type"] == "new_message" }.count
                    #expect(sent == ["complete": 16, "unread_only": 6, "partial": 6][policy], "\(policy), limit \(limit)")
                }
            }
        }
    }

    @Test("A snapshot pages with limit; then changes after it follow without loss")
    func snapshotPaging() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            var expected: Set<String> = []
            for index in 0..<3 {
                let conversation = try await alice.conversation(with: ["friend\(index)"])
                expected.insert(conversation)
                for text in ["a", "b"] { expected.insert(try await alice.send(text, to: conversation)["id"]!.stringValue!) }
            }
            var seen: [String] = []
            var anchor: JSONValue = 0
            var pages = 0
            while true {
                let page = try await alice.sync(anchor: anchor, limit: 2, policy: "complete")
                pages += 1
                for operation in page["operations"]?.arrayValue ?? [] {
                    seen.append(operation["message_id"]?.stringValue ?? operation["conversation_id"]!.stringValue!)
                }
                anchor = page["anchor"]!
                if page["more"] != true { break }
            }
            #expect(pages == 5)
            #expect(seen.count == 9)
            #expect(Set(seen) == expected)
            #expect(anchor.intValue != nil)
            let conversation = try #require(expected.first { $0.contains("conversations") })
            let late = try await alice.send("late", to: conversation)["id"]!.stringValue!
            let after = try await alice.sync(anchor: anchor)
            #expect(after["operations"]?.arrayValue?.compactMap { $0["message_id"]?.stringValue } == [late])
        }
    }
}
