import Foundation
import LayerModels
import LayerTesting
import Testing

/// The call history searched: `GET /calls?with=<identity>&from&to&state`, each filter alone and
/// together, with paging and `Layer-Count` over what they leave.
@Suite("Call history search")
struct CallHistorySearchTests {
    static func ids(_ party: Party, _ query: String) async throws -> [String] {
        let answer = try await party.get("/calls?" + query)
        #expect(answer.status == 200, "\(query): \(answer.text)")
        return answer.json?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test("Calls with one person, in a time range, in one state; the rest of the history left out")
    func filters() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let toBob = try await alice.placeCall(to: bob)
            #expect(try await alice.post("\(alice.path(toBob))/cancel").status == 200)
            let fromCarol = try await carol.placeCall(to: alice)
            #expect(try await alice.answer(fromCarol).status == 200)
            let middle = try #require(try await alice.get(alice.path(fromCarol)).json?["created_at"]?.stringValue)
            let toBobAgain = try await alice.placeCall(to: bob)

            #expect(try await Self.ids(alice, "") == [toBobAgain, fromCarol, toBob])
            #expect(try await Self.ids(alice, "with=bob") == [toBobAgain, toBob])
            let carolID = carol.identity.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await Self.ids(alice, "with=\(carolID)") == [fromCarol])
            #expect(try await Self.ids(alice, "state=cancelled") == [toBob])
            #expect(try await Self.ids(alice, "state=ringing&with=bob") == [toBobAgain])
            #expect(try await Self.ids(bob, "with=carol").isEmpty, "Carol never called Bob")
            let time = middle.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await Self.ids(alice, "from=\(time)") == [toBobAgain, fromCarol])
            #expect(try await Self.ids(alice, "to=\(time)") == [toBob])

            // Paging counts what the filter leaves.
            let first = try await alice.get("/calls?with=bob&page_size=1")
            #expect(first.headers.first(name: "Layer-Count") == "2")
            #expect(first.json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [toBobAgain])
            let next = toBobAgain.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(try await Self.ids(alice, "with=bob&page_size=1&from_id=\(next)") == [toBob])
        }
    }

    @Test("A malformed filter is 422 naming it")
    func badFilters() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            for (query, property) in [
                ("state=asleep", "state"), ("from=tuesday", "from"), ("to=31%2F02%2F2026", "to"),
                ("with=layer:///identities/", "with"),
            ] {
                let answer = try await alice.get("/calls?" + query)
                #expect(answer.status == 422, "\(query)")
                #expect(answer.errorProperty == property, "\(query): \(answer.text)")
            }
        }
    }
}
