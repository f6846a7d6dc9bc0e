import Foundation
import LayerModels
import LayerTesting
import Logging
import NameMatching
import Testing

@testable import LayerNames

/// Tier 2 and tier 3 are computed from tier 1 alone: dropped and computed again, they answer
/// the same.
@Suite struct RecomputeTests {
    @Test func droppingThePersonsTierAndComputingItAgainGivesTheSameAnswers() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            var ids: [String] = []
            ids +=
                try await server.add([
                    person("Robert", "Smith", [("system", "rsmith"), ("email", "rob@example.com")], birthday: "1970-01-02"),
                    person("Bob", "Smyth", [("email", "bob.smyth@example.com")], birthday: "1970-01-02"),
                    person("Ann", "Lee", [("phone", "+14155550199")]),
                ])["persons"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            ids +=
                try await server.add([
                    person("Rob", "Smith", [("system", "rsmith"), ("phone", "+14155550100")]),
                    person("Ann", "Lee", [("phone", "+14155550199"), ("email", "ann@example.com")]),
                ])["persons"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            let user = try await names.user("dana")
            _ = try await AddressBookTests.book(
                user, [person("Ann", nil, [("email", "ann@example.com"), ("twitter", "annlee")])])

            func answers() async throws -> [String] {
                var result: [String] = []
                for id in Set(ids).sorted() { result.append(try await server.get("/persons/\(bareUUID(id))").text) }
                for address in ["email:rob@example.com", "phone:+14155550100", "phone:+14155550199", "twitter:annlee"] {
                    let resolved = try await server.resolve(address)
                    result.append("\(address) \(resolved.status) \(resolved.person ?? "-") \(resolved.confidence ?? 0)")
                }
                result.append(try await server.get("/persons/duplicates?min_probability=0").text)
                return result.map { $0.replacingOccurrences(of: #""updated_at":"[^"]*""#, with: "", options: .regularExpression) }
                    .map { $0.replacingOccurrences(of: #""created_at":"[^"]*""#, with: "", options: .regularExpression) }
            }
            let before = try await answers()
            let repository = Directory(postgres: names.fixture.server.postgres, defaultRegion: "US").persons
            let replayed = try await repository.recomputeAll(app: names.fixture.app.id, batch: 2, logger: Logger(label: "test"))
            #expect(replayed == 6)
            let after = try await answers()
            #expect(before == after)
            #expect(before.contains { $0.contains("\"first_name\":\"Rob\"") }, "the newest record of rsmith names the person")
        }
    }
}
