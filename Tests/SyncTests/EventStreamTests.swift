import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// The `event` names of events that carry a change of the changelog; ephemeral events (presence,
/// typing, signals) have other names.
private let changelogTypes: Set<String> = [
    "new_message", "update_status", "update_tags", "new_conversation", "update_conversation", "delete_conversation",
    "delete_message",
]

extension TestEventStream {
    /// The next `count` events that carry changes, skipping ephemeral ones.
    fileprivate func changes(_ count: Int, timeout: Duration = .seconds(5)) async throws -> [SSEEvent] {
        var events: [SSEEvent] = []
        for _ in 0..<count {
            events.append(try await next(timeout: timeout) { changelogTypes.contains($0.event ?? "") })
        }
        return events
    }

    /// Fails if a change event arrives within `window`.
    fileprivate func expectNoChange(
        for window: Duration = .milliseconds(600), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        do {
            let event = try await next(timeout: window) { changelogTypes.contains($0.event ?? "") }
            Issue.record(
                "expected no more changes, got \(event.id ?? "-") \(event.event ?? "-") \(event.data)",
                sourceLocation: sourceLocation)
        } catch is PushTimeout {}
    }
}

extension SSEEvent {
    /// The event's id as a changelog seq.
    fileprivate var seq: Int? { id.flatMap { Int($0) } }
}

/// The last seq of `user`'s changelog, from a snapshot sync.
private func lastSeq(_ user: UserClient) async throws -> Int {
    let anchor = try await user.sync(anchor: 0)["anchor"]
    guard let seq = anchor?.intValue else { throw FixtureError("the snapshot anchor \(String(describing: anchor)) is not a seq") }
    return seq
}

/// Sends `texts` as `sender`, in order, and returns the message ids.
private func send(_ texts: [String], as sender: UserClient, to conversation: String) async throws -> [String] {
    var ids: [String] = []
    for text in texts {
        let message = try await sender.send(text, to: conversation)
        ids.append(try #require(message["id"]?.stringValue))
    }
    return ids
}

@Suite("Server-sent events")
struct EventStreamTests {
    @Test(
        "GET /events is a text/event-stream where each change is an event: id = its seq, event = its type, data = the operation POST /sync gives"
    )
    func eventsMirrorTheChangelog() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let start = try await lastSeq(bob)
            let stream = try await harness.events(bob)
            #expect(stream.status == 200)
            #expect(
                stream.contentType?.lowercased().hasPrefix("text/event-stream") == true,
                "\(stream.contentType ?? "no Content-Type")")

            let sent = try await send(["one", "two", "three"], as: alice, to: conversation)
            var events = try await stream.changes(3)
            #expect(events.map(\.seq) == [start + 1, start + 2, start + 3], "consecutive ids from the stream's start")
            #expect(events.map(\.event) == ["new_message", "new_message", "new_message"])
            #expect(events.map { $0.json?["message_id"]?.stringValue } == sent)

            // Bob reads the first message: an update_status follows, still in order.
            #expect(try await bob.post("/\(path(sent[0]))/receipts", ["type": "read"]).status == 204)
            let status = try await stream.changes(1)
            #expect(status.map(\.seq) == [start + 4])
            #expect(status.first?.event == "update_status")
            #expect(status.first?.json?["message_id"]?.stringValue == sent[0])
            events += status

            for event in events {
                let seq = try #require(event.seq)
                let data = try #require(event.json, "data is JSON: \(event.data)")
                #expect(data["seq"]?.intValue == seq)
                #expect(data["type"]?.stringValue == event.event)
                let page = try await bob.sync(anchor: .number(Double(seq - 1)), limit: 1)
                let operation = try #require(page["operations"]?.arrayValue?.first)
                #expect(operation["seq"]?.intValue == seq)
                #expect(operation["type"] == data["type"])
                #expect(operation["message_id"] == data["message_id"])
                #expect(operation["conversation_id"] == data["conversation_id"])
                if event.event == "update_status" || event.seq == start + 2 || event.seq == start + 3 {
                    // Nothing about these changed since they were pushed: the whole operation is the same.
                    #expect(data == operation, "event \(seq) differs from POST /sync")
                }
            }
            stream.close()
        }
    }

    @Test("The device that made a change gets it on its own stream, as the sender sees it")
    func senderGetsItsOwnChanges() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let start = try await lastSeq(alice)
            let stream = try await harness.events(alice)
            #expect(stream.status == 200)
            let conversation = try await alice.conversation(with: ["bob"])
            let sent = try await send(["mine"], as: alice, to: conversation)

            let events = try await stream.changes(2)
            #expect(events.map(\.seq) == [start + 1, start + 2])
            #expect(events.map(\.event) == ["new_conversation", "new_message"])
            #expect(events[0].json?["conversation_id"]?.stringValue == conversation)
            #expect(events[1].json?["message_id"]?.stringValue == sent[0])
            #expect(events[1].json?["message"]?["is_unread"] == .bool(false), "the sender has read their own message")
            stream.close()
        }
    }

    @Test("A session in Authorization opens the stream as well as ?session_token= does, whatever curl accepts")
    func authorizationHeader() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let stream = try await TestEventStream.connect(
                url: "\(harness.fixture.server.baseURL)/events",
                headers: ["Authorization": "Layer session-token=\"\(bob.token)\"", "Accept": "*/*"])
            #expect(stream.status == 200)
            let sent = try await send(["hi"], as: alice, to: conversation)
            let event = try #require(try await stream.changes(1).first)
            #expect(event.event == "new_message")
            #expect(event.json?["message_id"]?.stringValue == sent[0])
            stream.close()
        }
    }

    @Test("Changes from concurrent writers arrive in seq order with consecutive ids, even past the outbox's size")
    func concurrentWriters() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let conversation = try await alice.conversation(with: ["bob", "carol"])
            let start = try await lastSeq(bob)
            let stream = try await harness.events(bob)
            // 40 messages from two writers at once: more than the 16 a device may have queued.
            let sent = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<40 {
                    let sender = index.isMultiple(of: 2) ? alice : carol
                    group.addTask { try #require(try await sender.send("m\(index)", to: conversation)["id"]?.stringValue) }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            let events = try await stream.changes(40)
            #expect(events.map(\.seq) == (1...40).map { start + $0 }, "consecutive ids in seq order")
            #expect(Set(events.compactMap { $0.json?["message_id"]?.stringValue }) == sent)
            let logged = try await bob.catchUp(from: .number(Double(start))).operations
            #expect(
                logged.map { $0["message_id"]?.stringValue } == events.map { $0.json?["message_id"]?.stringValue },
                "the stream's order is the changelog's")
            try await stream.expectNoChange()
            stream.close()
        }
    }

    @Test(
        "A reconnecting stream gets exactly the changes it missed, then live ones",
        arguments: ["Last-Event-ID", "anchor"])
    func resume(how: String) async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let first = try await harness.events(bob)
            let before = try await send(["one", "two"], as: alice, to: conversation)
            let seen = try await first.changes(2)
            #expect(seen.map { $0.json?["message_id"]?.stringValue } == before)
            let last = try #require(seen.last?.seq)
            first.close()
            #expect(try await first.ended())

            // More than the 16 changes a device may have queued.
            let missed = try await send((3...22).map { "m\($0)" }, as: alice, to: conversation)
            let again =
                how == "anchor"
                ? try await harness.events(bob, query: "&anchor=\(last)")
                : try await harness.events(bob, headers: ["Last-Event-ID": String(last)])
            #expect(again.status == 200)
            let caughtUp = try await again.changes(missed.count)
            #expect(caughtUp.map(\.seq) == (1...missed.count).map { last + $0 }, "the missed changes, none twice, none left out")
            #expect(caughtUp.map { $0.json?["message_id"]?.stringValue } == missed)

            // An EventSource reconnects to the same URL with Last-Event-ID: the header wins over ?anchor=.
            let both = try await harness.events(
                bob, headers: ["Last-Event-ID": String(last + missed.count - 1)], query: "&anchor=\(last)")
            #expect(both.status == 200)
            #expect(try await both.changes(1).map(\.seq) == [last + missed.count])
            try await both.expectNoChange(for: .milliseconds(300))
            both.close()

            let live = try await send(["live"], as: alice, to: conversation)
            let next = try await again.changes(1)
            #expect(next.map(\.seq) == [last + missed.count + 1])
            #expect(next.first?.json?["message_id"]?.stringValue == live[0])
            try await again.expectNoChange()
            again.close()
        }
    }

    @Test("An idle stream gets keep-alive comments")
    func keepAlive() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let alice = try await harness.user("alice")
            let stream = try await harness.events(alice)
            #expect(stream.status == 200)
            // The first comment may be the one the stream opens with; the next two are keep-alives, sent every
            // 300 ms here. The generous wait only bounds a loaded machine; how often they come is configuration.
            for _ in 0..<3 { try await stream.waitForComment(timeout: .seconds(10)) }
            #expect(!(try await stream.ended(timeout: .zero)))
            stream.close()
        }
    }

    @Test("A request without a session is answered 401 authentication_required")
    func noSession() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let stream = try await TestEventStream.connect(url: "\(harness.fixture.server.baseURL)/events")
            #expect(stream.status == 401)
            #expect(try await stream.body()["id"]?.stringValue == "authentication_required")
            let bogus = try await TestEventStream.connect(url: "\(harness.fixture.server.baseURL)/events?session_token=nope")
            #expect(bogus.status == 401)
            #expect(try await bogus.body()["id"]?.stringValue == "authentication_required")
        }
    }

    @Test("A bad Last-Event-ID or anchor is refused with the API's error, and a valid stream is unaffected")
    func badResumePoints() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let valid = try await harness.events(bob)
            #expect(valid.status == 200)
            let last = try await lastSeq(bob)

            let notANumber = try await harness.events(bob, headers: ["Last-Event-ID": "abc"])
            #expect(notANumber.status == 406)
            let notANumberBody = try await notANumber.body()
            #expect(notANumberBody["id"]?.stringValue == "invalid_header")
            #expect(notANumberBody["data"]?["header"]?.stringValue == "Last-Event-ID")

            let ahead = try await harness.events(bob, headers: ["Last-Event-ID": String(last + 5)])
            #expect(ahead.status == 422)
            let aheadBody = try await ahead.body()
            #expect(aheadBody["id"]?.stringValue == "invalid_property")
            #expect(aheadBody["data"]?["property"]?.stringValue == "Last-Event-ID")

            for anchor in [String(last + 5), "-1", "abc"] {
                let bad = try await harness.events(bob, query: "&anchor=\(anchor)")
                #expect(bad.status == 422, "anchor=\(anchor)")
                let body = try await bad.body()
                #expect(body["id"]?.stringValue == "invalid_property", "anchor=\(anchor)")
                #expect(body["data"]?["property"]?.stringValue == "anchor", "anchor=\(anchor)")
            }

            let sent = try await send(["still here"], as: alice, to: conversation)
            let event = try #require(try await valid.changes(1).first)
            #expect(event.seq == last + 1)
            #expect(event.json?["message_id"]?.stringValue == sent[0])
            valid.close()
        }
    }

    @Test("A stream ends when its session is revoked")
    func sessionEnds() async throws {
        // The sync service caches session introspection; a short cache makes revocation visible fast.
        let settings = ServerSettings(introspectionCacheTTL: .milliseconds(200))
        try await AuthFixture.run(settings: settings, withSync: quickPush) { fixture in
            let harness = SyncHarness(fixture: fixture)
            let alice = try await harness.user("alice")
            let conversation = try await alice.conversation(with: ["bob"])
            let stream = try await harness.events(alice)
            #expect(stream.status == 200)
            _ = try await send(["before"], as: alice, to: conversation)
            #expect(try await stream.changes(1).first?.event == "new_message")

            let revoked = try await harness.client.request(.DELETE, "/sessions/\(alice.token)")
            #expect(revoked.status == 204)
            #expect(try await stream.ended(timeout: .seconds(5)), "the stream of a revoked session ends")

            let reopened = try await harness.events(alice)
            #expect(reopened.status == 401)
            #expect(try await reopened.body()["id"]?.stringValue == "authentication_required")
        }
    }
}
