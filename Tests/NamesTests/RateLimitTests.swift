import Foundation
import LayerModels
import LayerNames
import LayerTesting
import Testing

/// Resolution and writes have a budget per user (issue 25, finding 5: phone numbers could be
/// enumerated through `/resolve`).
@Suite struct RateLimitTests {
    /// Finding 5: `/resolve` and `/route` have a budget per user, and so do writes.
    @Test func resolutionAndWritesAreRateLimitedPerUser() async throws {
        // One request in 10 s (a burst of one): a loaded machine that takes a second per request
        // does not refill the budget between them, as it did at one a second.
        let settings = NamesSettings(resolveRate: 0.1, writeRate: 0.1)
        try await NamesHarness.run(settings: settings) { names in
            let bob = try await names.user("bob")
            var responses: [TestResponse] = []
            for _ in 0..<6 { responses.append(try await bob.get("/resolve?address=email:nobody@example.com")) }
            let limited = try #require(responses.first { $0.status == 429 }, "\(responses.map(\.status))")
            #expect(limited.errorID == "rate_limit_exceeded" && limited.headers.first(name: "Retry-After") != nil)
            let route = try await bob.post(
                "/route", ["address": "email:nobody@example.com", "app_id": .string(names.fixture.app.uri)])
            #expect(route.status == 429, "routing draws on the same budget")
            let carol = try await names.user("carol")
            #expect(try await carol.resolve("email:nobody@example.com").status == 404, "another user has a budget of her own")

            var writes: [Int] = []
            for index in 0..<6 {
                writes.append(
                    try await carol.post("/persons", ["persons": [person("C", "\(index)", [("system", "carol")])]]).status)
            }
            #expect(writes.contains(429) && writes.first == 201, "\(writes)")
            #expect(
                try await names.server().resolve("email:nobody@example.com").status == 404, "the app's backend is not limited")
        }
    }

}
