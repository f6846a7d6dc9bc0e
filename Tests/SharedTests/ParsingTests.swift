import Foundation
import LayerServer
import Testing

@Suite struct AuthorizationHeaderTests {
    @Test func readsSessionTokensInEitherQuotes() {
        #expect(LayerAuthorization.parse(#"Layer session-token="abc""#) == .sessionToken("abc"))
        #expect(LayerAuthorization.parse("Layer session-token='abc'") == .sessionToken("abc"))
        #expect(LayerAuthorization.parse(#"layer  session-token="abc""#) == .sessionToken("abc"))
    }

    @Test func readsIdentityTokensWithARealm() {
        #expect(
            LayerAuthorization.parse(#"Layer realm="example.com", identity-token="a.b.c""#) == .identityToken("a.b.c"))
    }

    @Test func refusesOtherSchemesAndEmptyTokens() {
        #expect(LayerAuthorization.parse("Bearer abc") == .malformed)
        #expect(LayerAuthorization.parse(#"Layer session-token="""#) == .malformed)
        #expect(LayerAuthorization.parse(#"Layer session-token="abc"#) == .malformed)
        #expect(LayerAuthorization.parse("Layer") == .malformed)
    }
}

@Suite struct DatabaseSettingsTests {
    @Test func parsesAPostgresURL() throws {
        let settings = try #require(DatabaseSettings(url: "postgres://layer:p%40ss@db.internal:6543/suite?sslmode=require"))
        #expect(settings.host == "db.internal")
        #expect(settings.port == 6543)
        #expect(settings.username == "layer")
        #expect(settings.password == "p@ss")
        #expect(settings.database == "suite")
        #expect(settings.requireTLS)
    }

    @Test func fillsDefaultsAndRefusesOtherSchemes() throws {
        let settings = try #require(DatabaseSettings(url: "postgresql://app@localhost"))
        #expect(settings.port == 5432 && settings.database == "app" && !settings.requireTLS && settings.password == nil)
        #expect(DatabaseSettings(url: "mysql://root@localhost/x") == nil)
        #expect(DatabaseSettings(url: "not a url") == nil)
    }
}

@Suite struct SettingsReaderTests {
    @Test func collectsEveryProblemAtOnce() throws {
        var reader = SettingsReader(["LAYER_PORT": "seventy", "LAYER_TLS_KEY": "/k.pem"])
        _ = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true)
        let error = try #require(throws: SettingsError.self) { try reader.validate("layer-auth") }
        let text = error.description
        #expect(text.contains("LAYER_DATABASE_URL"))
        #expect(text.contains("LAYER_INTERNAL_TOKEN"))
        #expect(text.contains("LAYER_PORT"))
        #expect(text.contains("LAYER_TLS_CERTIFICATE and LAYER_TLS_KEY"))
    }

    @Test func readsAWorkingConfiguration() throws {
        var reader = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN": "t",
            "LAYER_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2", "LAYER_INTROSPECTION_CACHE_MS": "250",
        ])
        let settings = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true)
        try reader.validate("layer-auth")
        #expect(settings.port == 8081)
        #expect(settings.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(settings.introspectionCacheTTL == .milliseconds(250))
    }
}

@Suite struct RateLimiterTests {
    @Test func allowsABurstThenRefuses() {
        let limiter = RateLimiter(.init(rate: 0.001, burst: 3))
        #expect((0..<3).allSatisfy { _ in limiter.allow("a") })
        #expect(!limiter.allow("a"))
        #expect(limiter.allow("b"), "each address has its own bucket")
    }

    @Test func refillsOverTime() async throws {
        let limiter = RateLimiter(.init(rate: 50, burst: 1))
        #expect(limiter.allow("a"))
        #expect(!limiter.allow("a"))
        try await Task.sleep(for: .milliseconds(60))
        #expect(limiter.allow("a"))
    }
}

@Suite struct SecretsTests {
    @Test func tokensAreLongURLSafeAndDistinct() {
        let tokens = Set((0..<100).map { _ in Secrets.randomToken() })
        #expect(tokens.count == 100)
        #expect(tokens.allSatisfy { $0.count == 43 && $0.allSatisfy { $0.isLetter || $0.isNumber || "-_".contains($0) } })
    }

    @Test func constantTimeComparisonCompares() {
        #expect(Secrets.constantTimeEquals("same", "same"))
        #expect(!Secrets.constantTimeEquals("same", "sane"))
        #expect(!Secrets.constantTimeEquals("same", "same-but-longer"))
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test("The hand-written formatter agrees with Foundation's ISO-8601 style and parses back")
    func agreesWithFoundation() throws {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400.999), Date()]
        for _ in 0..<200 { dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<4_102_444_800))) }
        for date in dates {
            let text = LayerTimestamp.string(date)
            #expect(text == date.formatted(style), "\(date.timeIntervalSince1970)")
            let parsed = try #require(LayerTimestamp.date(text))
            #expect(abs(parsed.timeIntervalSince(date)) < 0.001)
        }
    }
}
