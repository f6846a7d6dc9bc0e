import Foundation
import LayerModels
import LayerTesting
import Testing

/// The communication graph: sync reports who messaged whom, and resolution prefers, between
/// candidates otherwise alike, the one the caller talks to.
@Suite struct RelationshipTests {
    /// Two John Smiths, each with the same shared e-mail (a family address), known to the app as
    /// users john1 and john2: on the address alone they tie.
    static func twoJohns(_ names: NamesHarness) async throws -> (john1: String, john2: String) {
        let server = try await names.server()
        let john1 = try await server.addOne(person("John", "Smith", [("system", "john1"), ("email", "smiths@example.com")]))
        let john2 = try await server.addOne(person("John", "Smith", [("system", "john2"), ("email", "smiths@example.com")]))
        return (john1, john2)
    }

    @Test func aTieBetweenSimilarCandidatesIsBrokenByWhomTheCallerMessages() async throws {
        try await NamesHarness.run(withSync: true) { names in
            let (john1, john2) = try await Self.twoJohns(names)
            let carol = try await names.user("carol")
            let dave = try await names.user("dave")
            let untied = try await carol.resolve("email:smiths@example.com")
            #expect(untied.status == 200)

            // Carol messages john2 and Dave messages john1, through the sync service.
            for (sender, other) in [(carol, "john2"), (dave, "john1")] {
                _ = try await names.user(other)
                let conversation = try await sender.post(
                    "/conversations", ["participants": [.string(LayerID.identity(userID: other))], "distinct": true])
                let id = try #require(conversation.json?["id"]?.stringValue, "\(conversation.text)")
                let sent = try await sender.post(
                    "/\(path(id))/messages", ["parts": [["mime_type": "text/plain", "body": "hello"]]])
                #expect(sent.status == 201)
            }
            // The report reaches names within a second or two (it is batched off the send).
            var carolGets: String?
            var daveGets: String?
            for _ in 0..<50 {
                carolGets = try await carol.resolve("email:smiths@example.com").person
                daveGets = try await dave.resolve("email:smiths@example.com").person
                if carolGets == john2 && daveGets == john1 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(carolGets == john2 && daveGets == john1, "carol: \(carolGets ?? "-"), dave: \(daveGets ?? "-")")
        }
    }

    @Test func theInternalReportNeedsTheInternalToken() async throws {
        try await NamesHarness.run { names in
            let report: JSONValue = [
                "app_id": .string(names.appID), "events": [["from": "a", "to": ["b"], "kind": "message"]],
            ]
            let anonymous = try await names.client.request(.POST, "/internal/v1/relationships", json: report)
            #expect(anonymous.status == 401)
            let accepted = try await names.client.request(
                .POST, "/internal/v1/relationships",
                headers: [("Authorization", "Bearer \(names.fixture.internalTokens.token(of: "sync"))")],
                json: report)
            #expect(accepted.status == 200 && accepted.json?["pairs"]?.intValue == 1, "\(accepted.text)")
        }
    }
}
