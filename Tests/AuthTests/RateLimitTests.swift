import Foundation
import LayerAuth
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// Abuse-prone routes answer 429 `rate_limit_exceeded` once an address spends its bucket.
@Suite struct RateLimitTests {
    static let tight = AuthSettings.RateLimits(
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
            #expect(limited.headers.first(name: "Retry-After") == "1")
        }
    }

    @Test func behindATrustedProxyEachForwardedClientHasItsOwnBucket() async throws {
        let settings = ServerSettings(internalToken: Secrets.randomToken(), trustedProxies: ["127.0.0.1"])
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
}
