import Foundation
import LayerModels
import LayerTesting
import Testing

/// Writers of one app at once.
@Suite struct ConcurrencyTests {
    @Test func recordsOfOneUserAddedAtOnceBecomeOnePerson() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let ids = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await server.addOne(person("Kim", "Park", [("system", "kim"), ("email", "kim\(index)@example.com")]))
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(ids).count == 1, "one person for one user: \(Set(ids))")
            let resolved = try await Array(0..<8).asyncMap { try await server.resolve("email:kim\($0)@example.com").person }
            #expect(Set(resolved) == Set(ids), "every address of the eight records reaches that person")
            let read = try await server.get("/persons/\(bareUUID(ids[0]))")
            #expect(read.json?["addresses"]?.arrayValue?.count == 9)
        }
    }
}
