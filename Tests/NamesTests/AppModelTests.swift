import Foundation
import LayerModels
import LayerTesting
import Logging
import NameMatching
import PostgresNIO
import Testing

@testable import LayerNames

/// An app's matches are scored with a model estimated on its own store once the store is large
/// enough, estimated again as it doubles, and computed again with the rest of tier 2.
@Suite struct AppModelTests {
    @Test func theModelIsEstimatedOnTheStoreFromAThousandPersons() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let records = SyntheticPersons(seed: 11).generate(records: 1_020).records.map(Self.json)
            let postgres = names.fixture.server.postgres
            let app = names.fixture.app.id
            func estimatedFor() async throws -> Int? {
                let rows = try await postgres.query(
                    "SELECT persons FROM names.app_models WHERE app_id = \(app)", logger: Logger(label: "test"))
                for try await persons in rows.decode(Int32.self) { return Int(persons) }
                return nil
            }
            _ = try await server.add(Array(records[0..<990]))
            #expect(try await Self.personCount(postgres, app) == 990)
            #expect(try await estimatedFor() == nil, "the standard model below a thousand persons")
            _ = try await server.add(Array(records[990...]))
            let grown = try await Self.personCount(postgres, app)
            #expect(grown == 1_020)
            #expect(try await estimatedFor() == grown, "estimated once the store holds a thousand persons")
            _ = try await server.add([person("Extra", "Record", [("email", "extra.record@example.com")])])
            #expect(try await estimatedFor() == grown, "not again before the store has doubled")
            // Tier 2 computed again from the entries: the model is estimated again on the way.
            let repository = Directory(postgres: postgres, defaultRegion: "US").persons
            try await repository.recomputeAll(app: app, batch: 2_000, logger: Logger(label: "test"))
            #expect(try await estimatedFor() == grown + 1)
        }
    }

    static func personCount(_ postgres: PostgresClient, _ app: UUID) async throws -> Int {
        let rows = try await postgres.query(
            "SELECT count(*) FROM names.persons WHERE app_id = \(app)", logger: Logger(label: "test"))
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// A generated record in the API's shape, without the addresses that would join records into
    /// one person (system addresses, verified ones): one record, one person.
    static func json(_ record: PersonRecord) -> JSONValue {
        var object: [String: JSONValue] = [
            "addresses": .array(
                record.addresses.filter { $0.type != "system" }.map { ["type": .string($0.type), "value": .string($0.value)] })
        ]
        if let first = record.firstName { object["first_name"] = .string(first) }
        if let last = record.lastName { object["last_name"] = .string(last) }
        if let birthday = record.birthday { object["birthday"] = .string(birthday) }
        if let location = record.location { object["location"] = .string(location) }
        return .object(object)
    }
}
