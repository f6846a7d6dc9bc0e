import Foundation
import LayerModels
import LayerTesting
import Testing

extension ServerClient {
    /// Sends a text announcement from a named sender and returns its id; fails unless 202.
    func announce(_ text: String, to recipients: [String], tag: String? = nil) async throws -> String {
        let addressed: [String: JSONValue] = [
            "recipients": .array(recipients.map { .string(LayerID.identity(userID: $0)) }), "sender": ["name": "Layerline"],
        ]
        let response = try await post("/announcements", .object(addressed.merging(textMessage(text)) { $1 }), tag: tag)
        return try createdID(response, of: "POST /apps/…/announcements", statuses: [202])
    }
}

@Suite("Server API announcements")
struct AnnouncementTests {
    @Test("An announcement reaches its recipients only; each reads and deletes their own copy")
    func delivery() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")

            let sent = try await api.post(
                "/announcements",
                [
                    "recipients": ["layer:///identities/alice", "bob", "dave", "bob"], "sender": ["name": "Layerline"],
                    "parts": [["mime_type": "text/plain", "body": "New terms of service"]], "notification": ["text": "Heads up"],
                ])
            #expect(sent.status == 202)
            let announcement = try #require(sent.json)
            let id = try #require(announcement["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///announcements/"))
            #expect(announcement["url"]?.stringValue?.hasSuffix("/announcements/\(bareUUID(id))") == true)
            #expect(announcement["receipts_url"]?.stringValue?.hasSuffix("/announcements/\(bareUUID(id))/receipts") == true)
            #expect(announcement["conversation"] == .null)
            #expect(announcement["sender"]?["name"] == "Layerline")
            #expect(announcement["sender"]?["user_id"] == .null)
            #expect(
                Set(announcement["recipients"]?.arrayValue ?? []) == [
                    "layer:///identities/alice", "layer:///identities/bob", "layer:///identities/dave",
                ])
            let part = announcement["parts"]?.arrayValue?.first
            #expect(part?["body"] == "New terms of service")
            #expect(part?["id"]?.stringValue?.hasPrefix("\(id)/parts/") == true)
            #expect(announcement["recipient_status"]?["layer:///identities/bob"] == "sent")
            #expect(announcement["notification"]?["text"] == "Heads up")
            #expect(announcement["position"]?.intValue != nil)
            #expect(announcement["sent_at"]?.stringValue != nil)

            let list = try await alice.get("/announcements")
            #expect(list.status == 200)
            #expect(list.headers.first(name: "Layer-Count") == "1")
            #expect(listedIDs(list) == [id])
            let mine = try #require(list.json?.arrayValue?.first)
            #expect(mine["is_unread"] == true)
            #expect(mine["recipient_status"] == ["layer:///identities/alice": "sent"])
            #expect(mine["conversation"] == .null)
            #expect(mine["recipients"] == nil)
            #expect(mine["parts"]?.arrayValue?.first?["body"] == "New terms of service")

            // Carol was not a recipient.
            #expect(try await carol.get("/announcements").headers.first(name: "Layer-Count") == "0")
            #expect(try await carol.get("/\(path(id))").status == 404)
            #expect(try await carol.post("/\(path(id))/receipts", ["type": "read"]).status == 404)
            #expect(try await carol.delete("/\(path(id))").status == 404)

            #expect(try await alice.post("/\(path(id))/receipts", ["type": "read"]).status == 204)
            #expect(try await alice.post("/\(path(id))/receipts", ["type": "delivery"]).status == 204)
            let read = try await alice.get("/\(path(id))")
            #expect(read.json?["is_unread"] == false)
            #expect(read.json?["recipient_status"] == ["layer:///identities/alice": "read"])
            #expect(try await alice.post("/\(path(id))/receipts", ["type": "seen"]).errorProperty == "type")
            #expect(try await bob.get("/\(path(id))").json?["is_unread"] == true)
            #expect(try await bob.post("/\(path(id))/receipts", ["type": "delivery"]).status == 204)
            #expect(try await bob.get("/\(path(id))").json?["recipient_status"] == ["layer:///identities/bob": "delivered"])

            #expect(try await alice.delete("/\(path(id))").status == 204)
            #expect(try await alice.get("/\(path(id))").status == 404)
            #expect(try await alice.delete("/\(path(id))").status == 404)
            #expect(try await alice.get("/announcements").headers.first(name: "Layer-Count") == "0")
            #expect(try await bob.get("/announcements").headers.first(name: "Layer-Count") == "1")

            // Dave had never signed in: the announcement made him a user, and waits for him.
            #expect(try await api.get("/users/dave/identity").status == 200)
            let dave = try await harness.user("dave")
            #expect(listedIDs(try await dave.get("/announcements")) == [id])
            #expect(try await harness.client.request(.GET, "/announcements").status == 401)
        }
    }

    @Test("A user's announcements come newest first, in pages")
    func paging() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            var sent: [String] = []
            for index in 0..<3 { sent.append(try await api.announce("Notice \(index)", to: ["alice"])) }
            let other = try await api.announce("For Bob", to: ["bob"])

            let all = try await alice.get("/announcements")
            #expect(listedIDs(all) == sent.reversed())
            let positions = all.json?.arrayValue?.compactMap { $0["position"]?.intValue } ?? []
            #expect(positions == positions.sorted(by: >))
            let page = try await alice.get("/announcements?page_size=2")
            #expect(listedIDs(page) == [sent[2], sent[1]])
            #expect(page.headers.first(name: "Layer-Count") == "3")
            let next = try await alice.get("/announcements?page_size=2&from_id=\(bareUUID(sent[1]))")
            #expect(listedIDs(next) == [sent[0]])
            #expect(try await alice.get("/announcements?from_id=\(bareUUID(other))").status == 422)
            #expect(try await alice.get("/announcements?page_size=101").status == 422)
            #expect(listedIDs(try await bob.get("/announcements")) == [other])
        }
    }

    @Test("Announcement requests are checked: recipients, sender, parts and notification")
    func validation() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            _ = try await harness.user("alice")
            let parts: JSONValue = [["mime_type": "text/plain", "body": "x"]]
            let sender: JSONValue = ["name": "Ops"]
            let cases: [(body: JSONValue, id: String, property: String)] = [
                (["sender": sender, "parts": parts], "missing_property", "recipients"),
                (["recipients": [], "sender": sender, "parts": parts], "invalid_property", "recipients"),
                (
                    ["recipients": .array((0...1000).map { .string("u\($0)") }), "sender": sender, "parts": parts],
                    "invalid_property", "recipients"
                ),
                (["recipients": ["alice", 4], "sender": sender, "parts": parts], "invalid_property", "recipients.1"),
                (["recipients": ["alice"], "parts": parts], "missing_property", "sender_id"),
                (["recipients": ["alice"], "sender_id": "nobody", "parts": parts], "invalid_property", "sender_id"),
                (
                    ["recipients": ["alice"], "sender_id": "alice", "sender": sender, "parts": parts], "invalid_property",
                    "sender"
                ),
                (["recipients": ["alice"], "sender": sender], "missing_property", "parts"),
                (["recipients": ["alice"], "sender": sender, "parts": [["body": "x"]]], "missing_property", "parts.0.mime_type"),
                (
                    ["recipients": ["alice"], "sender": sender, "parts": parts, "notification": "x"], "invalid_property",
                    "notification"
                ),
                (
                    ["recipients": ["alice"], "sender": sender, "parts": parts, "conversation": "x"], "invalid_property",
                    "conversation"
                ),
            ]
            for (body, id, property) in cases {
                let response = try await api.post("/announcements", body)
                #expect(response.status == 422, "\(property)")
                #expect(response.errorID == id, "\(property)")
                #expect(response.errorProperty == property)
            }
            #expect(try await harness.user("alice").get("/announcements").headers.first(name: "Layer-Count") == "0")

            // An existing user may be the sender.
            let fromUser = try await api.post(
                "/announcements", ["recipients": ["alice"], "sender_id": "layer:///identities/alice", "parts": parts])
            #expect(fromUser.status == 202)
            #expect(fromUser.json?["sender"]?["user_id"] == "alice")
            #expect(fromUser.json?["recipient_status"]?["layer:///identities/alice"] == "read")
        }
    }

    @Test("If-None-Match sends an announcement once, also under concurrent repeats")
    func requestTags() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let alice = try await harness.user("alice")
            let tag = UUID().uuidString
            let first = try await api.announce("Once", to: ["alice"], tag: tag)
            #expect(try await api.announce("Once", to: ["alice"], tag: tag) == first)
            let concurrentTag = UUID().uuidString
            let sent = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<6 { group.addTask { try await api.announce("Together", to: ["alice"], tag: concurrentTag) } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(sent).count == 1)
            #expect(try await alice.get("/announcements").headers.first(name: "Layer-Count") == "2")
            let conversationTag = UUID().uuidString
            _ = try await api.post("/conversations", ["participants": ["alice"]], tag: conversationTag)
            let misused = try await api.post(
                "/announcements",
                ["recipients": ["alice"], "sender": ["name": "A"], "parts": [["mime_type": "text/plain", "body": "x"]]],
                tag: conversationTag)
            #expect(misused.status == 400)
        }
    }
}
