import Foundation
import LayerModels
import LayerTesting
import Testing

/// `GET /search` (and the Server API's `/apps/<app>/users/<user>/search`): the messages a user may
/// see whose text holds the words, newest first, paged like every list.
@Suite("Search")
struct SearchTests {
    /// The ids of a search's answer, newest first; fails unless 200.
    static func found(_ user: UserClient, _ query: String) async throws -> [String] {
        let answer = try await user.get("/search?" + query)
        #expect(answer.status == 200, "\(query): \(answer.text)")
        return answer.json?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    static func id(_ message: JSONValue) throws -> String { try #require(message["id"]?.stringValue) }

    @Test("Words are found as word prefixes, whatever their case and accents, in text parts only")
    func wordsCaseAccentsAndPrefixes() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let cafeMessage = try Self.id(try await alice.send("Rendez-vous au Café de l'Éléphant à 18h", to: conversation))
            let streetMessage = try Self.id(try await bob.send("Die STRASSE ist lang; Straße auf Deutsch", to: conversation))
            let other = try Self.id(try await alice.send("nothing to see here", to: conversation))
            // A JSON part and a base64 part hold the words too, but are not text.
            let hidden = try await alice.post(
                "/\(path(conversation))/messages",
                [
                    "parts": [
                        ["mime_type": "application/json", "body": #"{"text":"cafe elephant"}"#],
                        [
                            "mime_type": "text/plain", "body": .string(Data("cafe elephant".utf8).base64EncodedString()),
                            "encoding": "base64",
                        ],
                    ]
                ])
            #expect(hidden.status == 201)

            #expect(try await Self.found(alice, "q=cafe") == [cafeMessage])
            #expect(try await Self.found(bob, "q=CAF%C3%89") == [cafeMessage])
            #expect(try await Self.found(bob, "q=%C3%A9l%C3%A9ph") == [cafeMessage], "a prefix of a word")
            #expect(try await Self.found(bob, "q=cafe%20elephant") == [cafeMessage], "every word must match")
            #expect(try await Self.found(bob, "q=cafe%20lion").isEmpty)
            #expect(try await Self.found(bob, "q=phant").isEmpty, "the middle of a word is not a prefix")
            #expect(try await Self.found(alice, "q=strasse") == [streetMessage])
            #expect(try await Self.found(alice, "q=18h") == [cafeMessage], "digits are words too")
            #expect(try await Self.found(alice, "q=%22vous%22+rendez!") == [cafeMessage], "punctuation only separates words")
            #expect(!(try await Self.found(alice, "q=see").contains(cafeMessage)))
            #expect(try await Self.found(alice, "q=see") == [other])

            // The answer is the message as the list shows it, with the count of everything found.
            let answer = try await alice.get("/search?q=cafe")
            #expect(answer.headers.first(name: "Layer-Count") == "1")
            #expect(
                answer.json?.arrayValue?.first?["parts"]?.arrayValue?.first?["body"]?.stringValue
                    == "Rendez-vous au Café de l'Éléphant à 18h")
            #expect(answer.json?.arrayValue?.first?["conversation"]?["id"]?.stringValue == conversation)
        }
    }

    @Test(
        "Only what the user may see: their conversations, within their time in them, not deleted for them, not from users they block, not of other apps"
    )
    func visibility() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let group = try await alice.conversation(with: ["bob", "carol"], distinct: false)
            let aliceAndCarol = try await alice.conversation(with: ["carol"])

            let before = try Self.id(try await alice.send("zebra before", to: group))
            let secret = try Self.id(try await alice.send("zebra secret", to: aliceAndCarol))
            #expect(try await Self.found(bob, "q=zebra") == [before], "not a conversation of Bob's")
            #expect(Set(try await Self.found(carol, "q=zebra")) == [before, secret])

            // Bob deletes a message from his devices: gone for him only.
            let deleted = try Self.id(try await carol.send("zebra deleted", to: group))
            #expect(try await bob.delete("/\(path(deleted))?mode=my_devices").status == 204)
            #expect(!(try await Self.found(bob, "q=zebra").contains(deleted)))
            #expect(try await Self.found(alice, "q=zebra").contains(deleted))

            // Bob blocks Carol: her messages are not found for him.
            #expect(try await harness.server().post("/users/bob/blocks", ["user_id": "carol"]).status == 204)
            let blocked = try Self.id(try await carol.send("zebra blocked", to: group))
            #expect(!(try await Self.found(bob, "q=zebra").contains(blocked)))

            // Bob is removed: he keeps finding what came before, and nothing after.
            let removal = try await alice.patch(
                "/\(path(group))", [["operation": "remove", "property": "participants", "id": .string(bob.identityID)]])
            #expect(removal.status == 204)
            let after = try Self.id(try await alice.send("zebra after", to: group))
            let found = try await Self.found(bob, "q=zebra")
            #expect(found.contains(before) && !found.contains(after))

            // Deleted for everyone: found by nobody.
            #expect(try await alice.delete("/\(path(before))?mode=all_participants").status == 204)
            #expect(!(try await Self.found(carol, "q=zebra").contains(before)))

            // Another app's user of the same name finds nothing of this app.
            let otherApp = try await harness.fixture.registerApp(keyIndex: 1)
            let foreign = UserClient(
                id: "alice", token: try await harness.fixture.session(user: "alice", app: otherApp), client: harness.client)
            #expect(try await Self.found(foreign, "q=zebra").isEmpty)
        }
    }

    @Test("Filters by conversation, sender, MIME type and time; pages newest first with from_id and Layer-Count")
    func filtersAndPaging() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let other = try await alice.conversation(with: ["carol"])
            var sent: [String] = []
            for index in 0..<7 {
                let sender = index % 2 == 0 ? alice : bob
                sent.append(try Self.id(try await sender.send("apple number \(index)", to: conversation)))
            }
            let elsewhere = try Self.id(try await alice.send("apple elsewhere", to: other))
            let markdown = try await alice.post(
                "/\(path(conversation))/messages", ["parts": [["mime_type": "text/markdown", "body": "**apple** pie"]]])
            let pie = try #require(markdown.json?["id"]?.stringValue)
            let all = [pie, elsewhere] + sent.reversed()
            #expect(try await Self.found(alice, "q=apple") == all, "newest first")

            // Pages of three, each after the last of the one before.
            var pages: [String] = []
            var next = "q=apple&page_size=3"
            while true {
                let answer = try await alice.get("/search?" + next)
                #expect(answer.status == 200)
                #expect(answer.headers.first(name: "Layer-Count") == "\(all.count)")
                let ids = answer.json?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
                pages += ids
                guard ids.count == 3, let last = ids.last else { break }
                next =
                    "q=apple&page_size=3&from_id=" + (last.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? last)
            }
            #expect(pages == all)

            let inConversation = try await Self.found(
                alice, "q=apple&conversation=" + conversation.replacingOccurrences(of: "layer:///conversations/", with: ""))
            #expect(inConversation == [pie] + sent.reversed())
            #expect(try await Self.found(alice, "q=apple&sender=bob") == [sent[5], sent[3], sent[1]])
            #expect(
                try await Self.found(
                    alice, "q=apple&sender=" + bob.identityID.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
                    == [sent[5], sent[3], sent[1]])
            #expect(try await Self.found(alice, "q=apple&mime_type=text%2Fmarkdown") == [pie])

            // Times: `from` included, `to` not.
            let fourth = try #require(try await alice.get("/\(path(sent[3]))").json?["sent_at"]?.stringValue)
            let encoded = fourth.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(
                try await Self.found(alice, "q=apple&to=\(encoded)&conversation=\(conversation)") == [sent[2], sent[1], sent[0]])
            #expect(try await Self.found(alice, "q=apple&from=\(encoded)&sender=bob") == [sent[5], sent[3]])
        }
    }

    @Test("Layer-Count counts up to 1,000: a word in 1,050 messages says 1000, and paging still reaches every one")
    func countStopsAtABound() async throws {
        try await SyncHarness.run { harness in
            let (alice, _, conversation) = try await harness.aliceAndBobInAConversation()
            let server = try await harness.server()
            for batch in 0..<11 {
                let messages: [JSONValue] = (0..<(batch < 10 ? 100 : 50)).map { index in
                    .object(senderIdentity("alice").merging(textMessage("kiwi batch\(batch) item\(index)")) { $1 })
                }
                let sent = try await server.post("/\(path(conversation))/messages", .array(messages))
                #expect(sent.status == 201, "\(sent.text)")
            }
            let first = try await alice.get("/search?q=kiwi&page_size=100")
            #expect(first.headers.first(name: "Layer-Count") == "1000")
            #expect(first.json?.arrayValue?.count == 100)
            let few = try await alice.get("/search?q=kiwi+batch10&page_size=100")
            #expect(few.headers.first(name: "Layer-Count") == "50", "a page that holds them all counts them exactly")
            var seen = Set<String>()
            var next = "q=kiwi&page_size=100"
            for _ in 0..<20 {
                let ids = listedIDs(try await alice.get("/search?" + next))
                seen.formUnion(ids)
                guard ids.count == 100, let last = ids.last else { break }
                next =
                    "q=kiwi&page_size=100&from_id=" + (last.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? last)
            }
            #expect(seen.count == 1050)
        }
    }

    @Test("Malformed searches are 422 naming the parameter; without a session 401")
    func badSearches() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let cases: [(String, Int, String, String)] = [
                ("", 422, "missing_property", "q"),
                ("q=%20!%3F", 422, "invalid_property", "q"),
                ("q=" + String(repeating: "a%20", count: 17), 422, "invalid_property", "q"),
                ("q=a&conversation=nope", 422, "invalid_property", "conversation"),
                ("q=a&from=yesterday", 422, "invalid_property", "from"),
                ("q=a&to=2026-13-45", 422, "invalid_property", "to"),
                ("q=a&page_size=0", 422, "invalid_property", "page_size"),
                ("q=a&from_id=layer:///messages/\(UUID().uuidString.lowercased())", 422, "invalid_property", "from_id"),
            ]
            for (query, status, id, property) in cases {
                let answer = try await alice.get("/search?" + query)
                #expect(answer.status == status, "\(query)")
                #expect(answer.json?["id"]?.stringValue == id, "\(query): \(answer.text)")
                #expect(answer.json?["data"]?["property"]?.stringValue == property, "\(query): \(answer.text)")
            }
            #expect(try await harness.client.request(.GET, "/search?q=a").status == 401)
        }
    }

    @Test("The Server API searches as the user and answers the same")
    func serverAPIAsUser() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let found = try Self.id(try await alice.send("kiwi fruit", to: conversation))
            let secret = try await alice.conversation(with: ["carol"])
            _ = try await alice.send("kiwi secret", to: secret)
            let server = try await harness.server()
            let answer = try await server.get("/users/bob/search?q=KIWI")
            #expect(answer.status == 200)
            #expect(answer.json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [found])
            #expect(answer.headers.first(name: "Layer-Count") == "1")
            // The same message, in the Server API's view of it (its URLs under the app's path).
            let own = try #require(try await bob.get("/search?q=KIWI").json?.arrayValue?.first)
            let served = try #require(answer.json?.arrayValue?.first)
            for field in ["id", "sent_at", "is_unread", "recipient_status"] {
                #expect(served[field] == own[field], "\(field)")
            }
            #expect(served["sender"]?["user_id"] == own["sender"]?["user_id"])
            #expect(served["conversation"]?["id"] == own["conversation"]?["id"])
            #expect(served["parts"]?.arrayValue?.map { $0["body"] } == own["parts"]?.arrayValue?.map { $0["body"] })
            #expect(try await server.get("/users/bob/search").status == 422)
        }
    }
}
