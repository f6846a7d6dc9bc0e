import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1
import Testing

/// What every Server API request must carry: a token of its own app, and an `If-None-Match` tag
/// that makes a repeat return what the first request made.
extension ServerAPITests {
    @Test("Every route wants a Server API token of its own app; ids of another app are not found")
    func authentication() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let id = try await api.conversation(["alice", "bob"])
            let message = try await api.send("Hi", to: id, sender: senderIdentity("alice"))
            let routes: [(HTTPMethod, String)] = [
                (.POST, "/conversations"), (.GET, "/\(path(id))"), (.PATCH, "/\(path(id))"), (.DELETE, "/\(path(id))"),
                (.GET, "/\(path(id))/messages"), (.POST, "/\(path(id))/messages"), (.GET, "/\(path(id))/\(path(message))"),
                (.DELETE, "/\(path(id))/\(path(message))"), (.GET, "/users/alice/conversations"),
                (.GET, "/users/alice/\(path(id))"), (.POST, "/users/alice/\(path(id))/mark_all_read"),
                (.GET, "/users/alice/\(path(id))/messages"), (.POST, "/users/bob/\(path(message))/receipts"),
                (.DELETE, "/users/bob/\(path(message))?mode=my_devices"), (.POST, "/users/alice/identity"),
                (.GET, "/users/alice/identity"), (.PUT, "/users/alice/identity"), (.PATCH, "/users/alice/identity"),
                (.DELETE, "/users/alice/identity"), (.GET, "/users/alice/blocks"), (.POST, "/users/alice/blocks"),
                (.DELETE, "/users/alice/blocks/bob"), (.POST, "/announcements"),
            ]
            let other = try await harness.fixture.registerApp(keyIndex: 1)
            let otherToken = try await harness.fixture.serverAPIToken(app: other)
            for (method, route) in routes {
                let url = "/apps/\(harness.appID)\(route)"
                let anonymous = try await harness.client.request(method, url)
                #expect(anonymous.status == 401, "\(method) \(route) without a token")
                #expect(anonymous.errorID == "authentication_required")
                let wrong = try await harness.client.request(method, url, headers: [("Authorization", "Bearer nope")])
                #expect(wrong.status == 401, "\(method) \(route) with a wrong token")
                let foreign = try await harness.client.request(method, url, headers: [("Authorization", "Bearer \(otherToken)")])
                #expect(foreign.status == 401, "\(method) \(route) with another app's token")
            }
            // The other app's own token does not reach this app's conversations, messages or users.
            let otherAPI = ServerClient(appID: other.id.lowercased, token: otherToken, client: harness.client)
            #expect(try await otherAPI.get("/\(path(id))").status == 404)
            #expect(try await otherAPI.delete("/\(path(id))").status == 404)
            #expect(try await otherAPI.get("/\(path(id))/messages").status == 404)
            #expect(try await otherAPI.sendRaw("x", to: id, sender: ["sender": ["name": "Ops"]]).status == 404)
            #expect(try await otherAPI.get("/users/alice/conversations").status == 404)
            #expect(try await otherAPI.get("/users/alice/identity").status == 404)
            #expect(try await api.get("/\(path(id))").status == 200)

            let noAccept = try await harness.client.request(
                .GET, "/apps/\(harness.appID)/\(path(id))", headers: api.auth, accept: nil)
            #expect(noAccept.status == 406)
        }
    }

    @Test("If-None-Match: a repeated tag returns the earlier resource, also under concurrent repeats")
    func requestTags() async throws {
        try await SyncHarness.run { harness in
            let api = try await harness.server()
            let tag = UUID().uuidString
            let body: JSONValue = ["participants": ["alice", "bob"], "distinct": false]
            let first = try await api.post("/conversations", body, tag: tag)
            #expect(first.status == 201)
            let id = try #require(first.json?["id"]?.stringValue)
            let repeated = try await api.post("/conversations", body, tag: "\"\(tag.lowercased())\"")
            #expect(repeated.status == 201)
            #expect(repeated.json?["id"]?.stringValue == id)
            #expect(try await api.get("/users/alice/conversations").headers.first(name: "Layer-Count") == "1")

            let misused = try await api.sendRaw("x", to: id, sender: senderIdentity("alice"), tag: tag)
            #expect(misused.status == 400)
            #expect(misused.errorID == "invalid_request")
            #expect(misused.json?["data"]?["header"] == "If-None-Match")
            let malformed = try await api.post("/conversations", body, tag: "not-a-uuid")
            #expect(malformed.status == 400)
            #expect(malformed.json?["data"]?["header"] == "If-None-Match")

            let messageTag = UUID().uuidString
            let message = try await api.send("Once", to: id, sender: senderIdentity("alice"), tag: messageTag)
            #expect(try await api.send("Once", to: id, sender: senderIdentity("alice"), tag: messageTag) == message)

            // A request that failed left nothing behind: its corrected repeat runs.
            let failedTag = UUID().uuidString
            let failed = try await api.post(
                "/\(path(id))/messages", ["sender_id": "alice", "parts": [["body": "no type"]]], tag: failedTag)
            #expect(failed.status == 422)
            let retried = try await api.sendRaw("Fixed", to: id, sender: senderIdentity("alice"), tag: failedTag)
            #expect(retried.status == 201)
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "2")

            // Concurrent repeats of one tag make one message and one conversation.
            let concurrentTag = UUID().uuidString
            let sent = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await api.send("Together", to: id, sender: senderIdentity("bob"), tag: concurrentTag) }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(sent).count == 1)
            #expect(try await api.get("/\(path(id))/messages").headers.first(name: "Layer-Count") == "3")

            let conversationTag = UUID().uuidString
            let made = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let response = try await api.post(
                            "/conversations", ["participants": ["dave", "erin"], "distinct": false], tag: conversationTag)
                        guard response.status == 201, let id = response.json?["id"]?.stringValue else {
                            throw FixtureError("a concurrent create answered \(response.status): \(response.text)")
                        }
                        return id
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(made).count == 1)
            #expect(try await api.get("/users/dave/conversations").headers.first(name: "Layer-Count") == "1")
        }
    }
}
