import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// Query strings as browsers and HTTP libraries write them: `+` for a space, `%2B` for a plus.
@Suite("Query strings")
struct QueryStringTests {
    @Test("GET /resolve reads + as a space: an e-mail with spaces around it and a phone written in groups resolve")
    func plusIsASpace() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let added = try await server.post(
                "/persons", ["persons": [person("Ann", "Lee", [("email", "ann@example.com"), ("phone", "+14155550123")])]])
            #expect(added.status == 201, "\(added.text)")
            let id = try #require(added.json?["persons"]?[0]?["id"]?.stringValue)
            let user = try await names.user("querier")
            for query in ["email%3A++Ann%40Example.com+", "phone%3A%2B1+415+555+0123", "email:ann@example.com"] {
                let resolved = try await user.get("/resolve?address=\(query)")
                #expect(resolved.status == 200, "\(query): \(resolved.text)")
                #expect(resolved.json?["person_id"]?.stringValue == id, "\(query)")
            }
            // A plus sign is %2B; a bare + is a space, so this is "phone: 14155550123", read in
            // the app's region (US) as the same number.
            #expect(try await user.get("/resolve?address=phone%3A+14155550123").json?["person_id"]?.stringValue == id)
        }
    }
}
