import Foundation
import LayerAuth
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOHTTP1
import Testing

/// Abuse-prone routes answer 429 `rate_limit_exceeded` once an address spends its bucket.
@Suite struct RateLimitTests {
    static let tight = RateLimits(
        nonces: .init(rate: 0.01, burst: 2), sessions: .init(rate: 0.01, burst: 2), certificates: .init(rate: 0.01, burst: 2))

    @Test func noncesSessionsAndCertificatesAreLimited() async throws {
        try await AuthFixture.run(rateLimits: Self.tight) { auth in
            for path in ["/nonces", "/sessions", "/certificates"] {
                var statuses: [Int] = []
                for _ in 0..<3 { statuses.append(try await auth.client.request(.POST, path, json: [:]).status) }
                #expect(statuses.prefix(2).allSatisfy { $0 != 429 }, "\(path): \(statuses)")
                #expect(statuses.last == 429, "\(path): \(statuses)")
            }
            let limited = try await auth.client.request(.POST, "/nonces")
            #expect(limited.errorID == "rate_limit_exceeded")
            #expect(limited.json?["code"] == 7)
            // 0.01 tokens a second: the next one is about 100 s away.
            #expect((90...100).contains(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0))
        }
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() async throws {
        let settings = ServerSettings(trustedProxies: ["127.0.0.1"])
        try await AuthFixture.run(rateLimits: Self.tight, settings: settings) { auth in
            let first = [("X-Forwarded-For", "203.0.113.7")]
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await auth.client.request(.POST, "/nonces", headers: first).status) }
            let second = [("X-Forwarded-For", "198.51.100.9")]
            statuses.append(try await auth.client.request(.POST, "/nonces", headers: second).status)
            #expect(statuses == [201, 201, 429, 201])
        }
    }

    @Test func anUntrustedPeerCannotDodgeTheLimitWithForwardedFor() async throws {
        try await AuthFixture.run(rateLimits: Self.tight) { auth in
            var statuses: [Int] = []
            for index in [1, 2, 99] {
                let forwarded = [("X-Forwarded-For", "10.0.0.\(index)")]
                statuses.append(try await auth.client.request(.POST, "/nonces", headers: forwarded).status)
            }
            #expect(statuses == [201, 201, 429])
        }
    }

    @Test func challengesAreLimitedLikeNonces() async throws {
        try await AuthFixture.run(rateLimits: Self.tight) { auth in
            var statuses: [Int] = []
            for _ in 0..<3 { statuses.append(try await auth.client.request(.GET, "/sessions/current").status) }
            #expect(statuses == [401, 401, 429])
        }
    }

    @Test("The nonce limit is what a client gets: POST /nonces and the 401 challenges of every service draw on one bucket")
    func nonceLimitIsOneBucketAcrossServices() async throws {
        let limits = RateLimits(
            nonces: .init(rate: 0.01, burst: 3), sessions: .init(rate: 1000, burst: 1000),
            certificates: .init(rate: 1000, burst: 1000))
        // Auth and sync in one process, as `layer dev` runs them.
        try await AuthFixture.run(rateLimits: limits, withSync: SyncSettings()) { auth in
            var statuses: [String: [Int]] = [:]
            for _ in 0..<3 {
                for (method, path) in [(HTTPMethod.POST, "/nonces"), (.GET, "/sessions/current"), (.GET, "/conversations")] {
                    statuses[path, default: []].append(try await auth.client.request(method, path).status)
                }
            }
            let answered = statuses.values.joined().filter { $0 != 429 }.count
            #expect(answered == 3, "a burst of 3 nonces, spent across the routes: \(statuses)")
            #expect(statuses.values.joined().filter { $0 == 429 }.count == 6, "\(statuses)")
        }
    }

    @Test("Inline identity tokens are limited like POST /sessions, in every service, from one bucket")
    func inlineIdentityTokensShareTheSessionsLimit() async throws {
        let limits = RateLimits(
            nonces: .init(rate: 1000, burst: 1000), sessions: .init(rate: 0.01, burst: 3),
            certificates: .init(rate: 1000, burst: 1000))
        try await AuthFixture.run(rateLimits: limits, withSync: SyncSettings()) { auth in
            let inline = [("Authorization", "Layer identity-token=\"not.a.token\"")]
            var statuses = [
                try await auth.client.request(
                    .POST, "/sessions", json: ["identity_token": "not.a.token", "app_id": .string(auth.app.uri)]
                ).status
            ]
            for path in ["/sessions/current", "/conversations", "/conversations", "/sessions/current"] {
                statuses.append(try await auth.client.request(.GET, path, headers: inline).status)
            }
            #expect(statuses == [422, 422, 422, 429, 429])
            let limited = try await auth.client.request(.GET, "/conversations", headers: inline)
            #expect(limited.errorID == "rate_limit_exceeded")
            // 0.01 tokens a second: the next one is about 100 s away.
            #expect((90...100).contains(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0))
        }
    }
}
