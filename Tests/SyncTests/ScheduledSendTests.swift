import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOHTTP1
import PostgresNIO
import Testing

/// A message body of one text part with a `schedule`.
private func delayed(_ text: String, delay: Double, typing: Double? = nil, sender: [String: JSONValue] = [:]) -> JSONValue {
    var schedule: [String: JSONValue] = ["delay_in_seconds": .number(delay)]
    if let typing { schedule["typing_indicator_in_seconds"] = .number(typing) }
    return .object(sender.merging(textMessage(text)) { $1 }.merging(["schedule": .object(schedule)]) { $1 })
}

extension TestWebSocket {
    /// The next typing indicator of `action`.
    fileprivate func typing(_ action: String, timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await next(timeout: timeout) {
            $0["type"] == "signal" && $0["body"]?["type"] == "typing_indicator"
                && $0["body"]?["data"]?["action"]?.stringValue == action
        }
    }

    /// The next `create` of the message `id`.
    fileprivate func created(_ id: String, timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await next(timeout: timeout) {
            $0["type"] == "change" && $0["body"]?["operation"] == "create" && $0["body"]?["object"]?["id"]?.stringValue == id
        }
    }

    /// Fails if the message `id` is created within `window`.
    fileprivate func expectNotCreated(
        _ id: String, within window: Duration, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        do {
            let packet = try await created(id, timeout: window)
            Issue.record("a dropped delayed message was sent: \(packet)", sourceLocation: sourceLocation)
        } catch is PushTimeout {}
    }
}

/// Whether a delayed send still waits in the database.
private func isWaiting(_ id: String, in postgres: PostgresClient) async throws -> Bool {
    let rows = try await postgres.query(
        "SELECT 1 FROM sync.scheduled_messages WHERE id = \(try #require(LayerID(parsing: id, as: .messages)).uuid)")
    for try await _ in rows { return true }
    return false
}

@Suite("Delayed sends of the Server API")
struct ScheduledSendTests {
    @Test("A delayed message arrives after its delay, not before, with the sender typing during its last seconds")
    func arrivesAfterTheDelay() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let bob = try await harness.user("bob")
            let conversation = try await api.conversation(["alice", "bob"])
            let socket = try await harness.socket(bob)

            let start = ContinuousClock.now
            let accepted = try await api.post(
                "/\(path(conversation))/messages", delayed("Sure!", delay: 2.0, typing: 1.5, sender: senderIdentity("alice")))
            #expect(accepted.status == 202, "\(accepted.text)")
            let id = try #require(accepted.json?["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///messages/"))
            #expect(accepted.json?["conversation"]?["id"]?.stringValue == conversation)
            let scheduledAt = try #require(accepted.json?["scheduled_at"]?.stringValue.flatMap(parseDate))
            let sendAt = try #require(accepted.json?["send_at"]?.stringValue.flatMap(parseDate))
            let typingAt = try #require(accepted.json?["typing_indicator_at"]?.stringValue.flatMap(parseDate))
            #expect(abs(sendAt.timeIntervalSince(scheduledAt) - 2.0) < 0.001)
            #expect(abs(sendAt.timeIntervalSince(typingAt) - 1.5) < 0.001)
            // Until it goes out, it is nowhere to be read.
            #expect(try await api.get("/\(path(conversation))/\(path(id))").status == 404)
            #expect(try await api.get("/users/bob/\(path(id))").status == 404)

            let typing = try await socket.typing("started")
            let typingSeen = ContinuousClock.now - start
            #expect(typing["body"]?["object"]?["id"]?.stringValue == conversation)
            #expect(typing["body"]?["data"]?["sender"]?["user_id"] == "alice")
            #expect(typing["body"]?["data"]?["user_id"] == "alice")
            // The message and the end of the typing indicator, in whichever order they come.
            var created: JSONValue?
            var arrived = Duration.zero
            var finished = false
            while created == nil || !finished {
                let packet = try await socket.next {
                    ($0["type"] == "change" && $0["body"]?["object"]?["id"]?.stringValue == id)
                        || ($0["body"]?["type"] == "typing_indicator" && $0["body"]?["data"]?["action"] == "finished")
                }
                if packet["type"] == "change" {
                    #expect(packet["body"]?["operation"] == "create")
                    created = packet
                    arrived = ContinuousClock.now - start
                } else {
                    finished = true
                }
            }
            #expect(typingSeen >= .milliseconds(500), "typing began \(typingSeen) after the request")
            #expect(typingSeen < arrived)
            #expect(arrived >= .seconds(2), "the message arrived \(arrived) after the request")
            #expect(created?["body"]?["data"]?["sender"]?["user_id"] == "alice")

            let message = try await api.get("/\(path(conversation))/\(path(id))")
            #expect(message.status == 200)
            #expect(message.json?["parts"]?[0]?["body"] == "Sure!")
            let sentAt = try #require(message.json?["sent_at"]?.stringValue.flatMap(parseDate))
            #expect(sentAt >= sendAt)
            #expect(try await isWaiting(id, in: harness.fixture.server.postgres) == false)
            await socket.close()
        }
    }

    @Test("A system sender and a user acting through the app send later too; If-None-Match repeats answer the same send")
    func systemSenderAndActingUser() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let bob = try await harness.user("bob")
            let conversation = try await api.conversation(["alice", "bob"])
            let socket = try await harness.socket(bob)

            let tag = UUID().lowercased
            // Six seconds: the repeat below must come while the send still waits, even on a loaded
            // machine (with two, one CI run sent it first); the typing indicator starts after four.
            let body = delayed("Your order shipped", delay: 6.0, typing: 2.0, sender: ["sender": ["name": "Order bot"]])
            let bot = try await api.post("/\(path(conversation))/messages", body, tag: tag)
            #expect(bot.status == 202)
            let repeated = try await api.post("/\(path(conversation))/messages", body, tag: tag)
            #expect(repeated.status == 202)
            #expect(repeated.json?["id"] == bot.json?["id"])
            let botID = try #require(bot.json?["id"]?.stringValue)
            let typing = try await socket.typing("started")
            #expect(typing["body"]?["data"]?["user_id"] == .null)
            #expect(typing["body"]?["data"]?["sender"]?["name"] == "Order bot")
            let created = try await socket.created(botID)
            #expect(created["body"]?["data"]?["sender"]?["name"] == "Order bot")
            // Once sent, a repeat answers the message.
            let afterwards = try await api.post("/\(path(conversation))/messages", body, tag: tag)
            #expect(afterwards.status == 201)
            #expect(afterwards.json?["id"]?.stringValue == botID)

            let asAlice = try await api.post("/users/alice/\(path(conversation))/messages", delayed("Later", delay: 1.0))
            #expect(asAlice.status == 202)
            #expect(asAlice.json?["typing_indicator_at"] == .null)
            let aliceID = try #require(asAlice.json?["id"]?.stringValue)
            let fromAlice = try await socket.created(aliceID)
            #expect(fromAlice["body"]?["data"]?["sender"]?["user_id"] == "alice")
            #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "2")
            // Scheduling checks the sender as sending does.
            _ = try await api.conversation(["carol"])
            #expect(try await api.post("/users/carol/\(path(conversation))/messages", delayed("x", delay: 1)).status == 404)
            let outsider = try await api.post(
                "/\(path(conversation))/messages", delayed("x", delay: 1, sender: senderIdentity("carol")))
            #expect(outsider.status == 422)
            #expect(outsider.errorProperty == "sender_id")
            let nowhere = "layer:///conversations/\(UUID().lowercased)"
            #expect(
                try await api.post("/\(path(nowhere))/messages", delayed("x", delay: 1, sender: ["sender": ["name": "Bot"]]))
                    .status == 404)
            await socket.close()
        }
    }

    @Test("A schedule out of range or of the wrong type is refused, naming the field, and nothing is sent")
    func invalidSchedules() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let conversation = try await api.conversation(["alice", "bob"])
            let route = "/\(path(conversation))/messages"
            let sender = senderIdentity("alice")
            func schedule(_ schedule: JSONValue) -> JSONValue {
                .object(sender.merging(textMessage("x")) { $1 }.merging(["schedule": schedule]) { $1 })
            }
            let cases: [(JSONValue, String)] = [
                (["delay_in_seconds": .number(0.5)], "schedule.delay_in_seconds"),
                (["delay_in_seconds": .number(300.5)], "schedule.delay_in_seconds"),
                (["delay_in_seconds": "5"], "schedule.delay_in_seconds"),
                (["delay_in_seconds": 5, "typing_indicator_in_seconds": .number(0.5)], "schedule.typing_indicator_in_seconds"),
                (["delay_in_seconds": 5, "typing_indicator_in_seconds": 6], "schedule.typing_indicator_in_seconds"),
                (["delay_in_seconds": 5, "typing_indicator_in_seconds": true], "schedule.typing_indicator_in_seconds"),
                (["delay_in_seconds": 5, "repeat": 2], "schedule.repeat"),
                ("soon", "schedule"),
                ([5], "schedule"),
            ]
            for (value, property) in cases {
                let response = try await api.post(route, schedule(value))
                #expect(response.status == 422, "\(value)")
                #expect(response.errorID == "invalid_property", "\(value)")
                #expect(response.errorProperty == property, "\(value)")
            }
            let missing = try await api.post(route, schedule(["typing_indicator_in_seconds": 2]))
            #expect(missing.errorID == "missing_property")
            #expect(missing.errorProperty == "schedule.delay_in_seconds")
            let asUser = try await api.post(
                "/users/alice/\(path(conversation))/messages",
                .object(textMessage("x").merging(["schedule": ["delay_in_seconds": 301]]) { $1 }))
            #expect(asUser.errorProperty == "schedule.delay_in_seconds")
            // The edges of the ranges are in them; a null schedule is no schedule.
            #expect(
                try await api.post(route, schedule(["delay_in_seconds": 300, "typing_indicator_in_seconds": 300])).status == 202)
            #expect(try await api.post(route, schedule(["delay_in_seconds": 1, "typing_indicator_in_seconds": 1])).status == 202)
            #expect(try await api.post(route, schedule(.null)).status == 201)
            // The Client API has no delayed sends.
            let alice = try await harness.user("alice")
            let client = try await alice.post(
                "/\(path(conversation))/messages", .object(textMessage("x").merging(["schedule": ["delay_in_seconds": 5]]) { $1 })
            )
            #expect(client.status == 422)
            #expect(client.errorProperty == "schedule")
        }
    }

    @Test("A delayed send is dropped when its conversation is deleted or its sender removed before it is due")
    func dropped() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let api = try await harness.server()
            let bob = try await harness.user("bob")
            let removal = try await api.conversation(["alice", "bob"])
            let deletion = try await api.conversation(["alice", "bob", "carol"])
            let socket = try await harness.socket(bob)

            let fromAlice = try await api.post(
                "/\(path(removal))/messages", delayed("Never", delay: 6, typing: 6, sender: senderIdentity("alice")))
            let fromBot = try await api.post(
                "/\(path(deletion))/messages", delayed("Never either", delay: 5, sender: ["sender": ["name": "Bot"]]))
            let aliceID = try #require(fromAlice.json?["id"]?.stringValue)
            let botID = try #require(fromBot.json?["id"]?.stringValue)
            // Alice is shown typing, then removed; the bot's conversation is deleted. (The delays
            // leave time for that on a loaded machine; the bot's falls due first.)
            let started = try await socket.typing("started")
            #expect(started["body"]?["data"]?["user_id"] == "alice")
            let remove: JSONValue = [["operation": "remove", "property": "participants", "id": "layer:///identities/alice"]]
            #expect(try await api.patch("/\(path(removal))", remove).status == 204)
            #expect(try await api.delete("/\(path(deletion))").status == 204)

            _ = try await socket.typing("finished", timeout: .seconds(15))
            try await socket.expectNotCreated(aliceID, within: .seconds(2))
            try await socket.expectNotCreated(botID, within: .milliseconds(100))
            #expect(try await api.get("/\(path(removal))/\(path(aliceID))").status == 404)
            #expect(try await api.get("/\(path(removal))/messages").headers.first(name: "Layer-Count") == "0")
            #expect(try await isWaiting(aliceID, in: harness.fixture.server.postgres) == false)
            #expect(try await isWaiting(botID, in: harness.fixture.server.postgres) == false)
            await socket.close()
        }
    }

    @Test("A delayed send survives a restart of the sync service: stopped before it is due, sent once after it starts again")
    func survivesRestart() async throws {
        let database = try await TestDatabase.isolated()
        let port = try await LiveServer.freePort()
        let serverSettings = ServerSettings(database: database)
        try await AuthFixture.run(settings: serverSettings, syncURL: "http://127.0.0.1:\(port)") { auth in
            var settings = quickPush
            settings.authURL = auth.server.baseURL
            let sync = SyncService.configured(settings)
            let token = try await auth.serverAPIToken()
            let bobToken = try await auth.session(user: "bob")

            let (conversation, id, bobAnchor) = try await LiveServer.run([sync], settings: serverSettings, port: port) { first in
                let client = TestClient(baseURL: first.baseURL)
                let api = ServerClient(appID: auth.app.id.lowercased, token: token, client: client)
                let bob = UserClient(id: "bob", token: bobToken, client: client)
                let conversation = try await api.conversation(["alice", "bob"])
                let anchor = try #require(try await bob.sync()["anchor"])
                let accepted = try await api.post(
                    "/\(path(conversation))/messages",
                    delayed("After the restart", delay: 2.0, typing: 1.0, sender: senderIdentity("alice")))
                #expect(accepted.status == 202)
                return (conversation, try #require(accepted.json?["id"]?.stringValue), anchor)
            }
            // No sync service runs while it falls due: it waits, unsent.
            try await Task.sleep(for: .milliseconds(2500))
            #expect(try await isWaiting(id, in: auth.server.postgres))
            let uuid = try #require(LayerID(parsing: id, as: .messages)).uuid
            let unsent = try await auth.server.postgres.query("SELECT count(*) FROM sync.messages WHERE id = \(uuid)")
            for try await count in unsent.decode(Int64.self) { #expect(count == 0) }

            try await LiveServer.run([sync], settings: serverSettings, port: port) { second in
                let client = TestClient(baseURL: second.baseURL)
                let api = ServerClient(appID: auth.app.id.lowercased, token: token, client: client)
                let bob = UserClient(id: "bob", token: bobToken, client: client)
                var status = 0
                for _ in 0..<50 where status != 200 {
                    status = try await api.get("/\(path(conversation))/\(path(id))").status
                    if status != 200 { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(status == 200, "sent after the restart")
                #expect(try await isWaiting(id, in: second.postgres) == false)
                let operations = try await bob.catchUp(from: bobAnchor).operations
                let copies = operations.filter { $0["type"] == "new_message" && $0["message_id"]?.stringValue == id }
                #expect(copies.count == 1)
            }
        }
    }

    @Test("Two replicas send each delayed message exactly once")
    func twoReplicasSendOnce() async throws {
        // A database of their own, so that only these two replicas carry out delayed sends.
        let settings = ServerSettings(database: try await TestDatabase.isolated())
        try await SyncHarness.run(settings: quickPush, server: settings) { harness in
            let api = try await harness.server()
            let bob = try await harness.user("bob")
            let conversation = try await api.conversation(["alice", "bob"])
            let anchor = try #require(try await bob.sync()["anchor"])
            try await harness.withReplica(settings: quickPush) { replica in
                let replicaAPI = ServerClient(appID: api.appID, token: api.token, client: TestClient(baseURL: replica))
                var ids: [String] = []
                for index in 0..<12 {
                    let through = index.isMultiple(of: 2) ? api : replicaAPI
                    let sender: [String: JSONValue] =
                        index.isMultiple(of: 3) ? ["sender": ["name": "Bot"]] : senderIdentity("alice")
                    let response = try await through.post(
                        "/\(path(conversation))/messages", delayed("#\(index)", delay: 1.0, typing: 1.0, sender: sender))
                    #expect(response.status == 202)
                    ids.append(try #require(response.json?["id"]?.stringValue))
                }
                var count = 0
                for _ in 0..<60 where count < ids.count {
                    try await Task.sleep(for: .milliseconds(100))
                    count =
                        Int(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") ?? "") ?? 0
                }
                #expect(count == ids.count)
                // A moment more: no replica sends any of them again.
                try await Task.sleep(for: .milliseconds(1500))
                #expect(try await api.get("/\(path(conversation))/messages").headers.first(name: "Layer-Count") == "\(ids.count)")
                let operations = try await bob.catchUp(from: anchor).operations
                for id in ids {
                    let copies = operations.filter { $0["type"] == "new_message" && $0["message_id"]?.stringValue == id }
                    #expect(copies.count == 1, "\(id)")
                }
            }
        }
    }
}

private func parseDate(_ text: String) -> Date? {
    (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
}
