import Foundation
import LayerModels
import LayerTesting
import Testing

/// Adding persons, reading them back, and the linking of records that name the same user.
@Suite struct PersonTests {
    @Test func addedRecordsComeBackNormalisedInOrderWithTheirPhoneticKeys() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let added = try await server.add([
                person("Ada", "Lovelace", [("email", " Ada@Example.COM "), ("phone", "+44 20 7946 0958"), ("twitter", "@AdaL")]),
                person("Charles", "Babbage", [("system", "babbage")]),
            ])
            let persons = try #require(added["persons"]?.arrayValue)
            #expect(persons.count == 2)
            #expect(persons[0]["first_name"] == "Ada" && persons[1]["last_name"] == "Babbage")
            let values = persons[0]["addresses"]?.arrayValue?.compactMap { $0["value"]?.stringValue }
            #expect(values == ["ada@example.com", "+442079460958", "adal"], "\(persons[0])")
            #expect(persons[0]["ln_metaphone"]?[0]?.stringValue?.isEmpty == false)

            let id = try #require(persons[0]["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///persons/"))
            let read = try await server.get("/persons/\(bareUUID(id))")
            #expect(read.status == 200 && read.json?["first_name"] == "Ada")
        }
    }

    @Test func recordsOfTheSameUserBecomeOnePersonAndLookAlikesAreReportedAsMatches() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let first = try await server.addOne(person("Robert", "Smith", [("system", "rsmith"), ("email", "bob@example.com")]))
            let again = try await server.add([
                person("Bob", "Smith", [("system", "rsmith"), ("phone", "+1 415 555 0100")]),
                person("Bob", "Smith", [("email", "bob@example.com")], birthday: "1980-04-02"),
            ])
            #expect(again["persons"]?[0]?["id"]?.stringValue == first, "the same system address is the same person")
            let other = try #require(again["persons"]?[1]?["id"]?.stringValue)
            #expect(other != first, "an unverified shared e-mail alone does not join records")
            let matches = try #require(again["matches"]?.arrayValue)
            let pair = matches.first { $0["persons"]?.arrayValue?.compactMap(\.stringValue).sorted() == [first, other].sorted() }
            #expect(pair != nil, "the look-alike is reported: \(matches)")
            #expect((pair?["probability"]?.numberValue ?? 0) >= 0.5)
            #expect(pair?["id"]?.stringValue?.hasPrefix("layer:///matches/") == true)
        }
    }

    @Test func aPersonOfAnotherAppIsNotFound() async throws {
        try await NamesHarness.run { names in
            let id = try await names.server().addOne(person("Grace", "Hopper", [("email", "grace@example.com")]))
            let (read, resolved) = try await NamesHarness.run { other in
                (
                    try await other.server().get("/persons/\(bareUUID(id))").status,
                    try await other.user("someone").resolve("email:grace@example.com").status
                )
            }
            #expect(read == 404 && resolved == 404)
        }
    }
}
