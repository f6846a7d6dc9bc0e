import Foundation
import Testing

@testable import LayerServer

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
        _ = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true, tokensOf: ["auth", "sync"])
        let error = try #require(throws: SettingsError.self) { try reader.validate("layer-auth") }
        let text = error.description
        #expect(text.contains("LAYER_DATABASE_URL"))
        #expect(text.contains("LAYER_INTERNAL_TOKEN_AUTH") && text.contains("LAYER_INTERNAL_TOKEN_SYNC"))
        #expect(!text.contains("LAYER_INTERNAL_TOKEN_VOIP"), "only the tokens of the service and its callers")
        #expect(text.contains("LAYER_PORT"))
        #expect(text.contains("LAYER_TLS_CERTIFICATE and LAYER_TLS_KEY"))
    }

    @Test("Each service's internal token is a setting of its own; the one token of earlier versions is refused, named")
    func internalTokensPerService() throws {
        var reader = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN_SYNC": "s",
            "LAYER_INTERNAL_TOKEN_VOIP": "v",
        ])
        let settings = ServerSettings.read(&reader, defaultPort: 8082, requireDatabase: true, tokensOf: ["sync", "voip"])
        try reader.validate("layer-sync")
        #expect(settings.internalTokens.token(of: "sync") == "s" && settings.internalTokens.token(of: "voip") == "v")
        #expect(settings.internalTokens.token(of: "auth") == "")
        #expect(settings.internalTokens.service(presenting: "v", among: ["auth", "voip"]) == "voip")
        #expect(settings.internalTokens.service(presenting: "v", among: ["auth", "sync"]) == nil)

        var old = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN": "t", "LAYER_INTERNAL_TOKEN_SYNC": "s",
        ])
        _ = ServerSettings.read(&old, defaultPort: 8082, requireDatabase: true, tokensOf: ["sync"])
        let error = try #require(throws: SettingsError.self) { try old.validate("layer-sync") }
        #expect(error.description.contains("LAYER_INTERNAL_TOKEN is no longer read"))
        #expect(error.description.contains("LAYER_INTERNAL_TOKEN_AUTH, LAYER_INTERNAL_TOKEN_SYNC"))
    }

    @Test func readsAWorkingConfiguration() throws {
        var reader = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN_AUTH": "t",
            "LAYER_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2", "LAYER_INTROSPECTION_CACHE_MS": "250",
        ])
        let settings = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true)
        try reader.validate("layer-auth")
        #expect(settings.port == 8081)
        #expect(settings.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(settings.introspectionCacheTTL == .milliseconds(250))
        #expect(settings.clientCertificateHeader == .clientCertificate)
    }

    @Test("Trusted proxies are addresses and CIDR ranges; anything else stops the service, named")
    func trustedProxyRanges() throws {
        var reader = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN_AUTH": "t",
            "LAYER_TRUSTED_PROXIES": "10.244.0.0/16, 192.0.2.7, fd00:1::/32",
            "LAYER_CLIENT_CERTIFICATE_HEADER": "ssl-client-cert",
        ])
        let settings = ServerSettings.read(&reader, defaultPort: 8082, requireDatabase: true)
        try reader.validate("layer-sync")
        let proxies = settings.trustedProxies
        for inside in ["10.244.0.1", "10.244.255.254", "192.0.2.7", "::ffff:10.244.3.4", "fd00:1:2::9"] {
            #expect(proxies.contains(inside), "\(inside)")
        }
        for outside in ["10.245.0.1", "192.0.2.8", "fd00:2::1", "127.0.0.1", "::1", "unknown", ""] {
            #expect(!proxies.contains(outside), "\(outside)")
        }
        #expect(settings.clientCertificateHeader.rawName == "ssl-client-cert")
        #expect(TrustedProxies(arrayLiteral: "0.0.0.0/0").contains("203.0.113.9"))
        #expect(!TrustedProxies.none.contains("127.0.0.1"))

        var bad = SettingsReader([
            "LAYER_DATABASE_URL": "postgres://u:p@h:5432/d", "LAYER_INTERNAL_TOKEN_AUTH": "t",
            "LAYER_TRUSTED_PROXIES": "10.0.0.0/33, edge.local, 10.0.0.1",
            "LAYER_CLIENT_CERTIFICATE_HEADER": "bad header",
        ])
        _ = ServerSettings.read(&bad, defaultPort: 8082, requireDatabase: true)
        let error = try #require(throws: SettingsError.self) { try bad.validate("layer-sync") }
        #expect(error.description.contains("'10.0.0.0/33', 'edge.local'"))
        #expect(error.description.contains("LAYER_CLIENT_CERTIFICATE_HEADER"))
    }

    @Test("A setting may come from the file LAYER_X_FILE names, without its trailing newline")
    func settingsFromFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let token = directory.appendingPathComponent("internal-token")
        try "s3cret-token\n".write(to: token, atomically: true, encoding: .utf8)
        let url = directory.appendingPathComponent("database-url")
        try "postgres://u:p@h:5432/d".write(to: url, atomically: true, encoding: .utf8)

        var reader = SettingsReader([
            "LAYER_DATABASE_URL_FILE": url.path, "LAYER_INTERNAL_TOKEN_AUTH_FILE": token.path,
            // Paths by name, not values given as files: left alone.
            "LAYER_CA_KEY_FILE": directory.appendingPathComponent("absent.key").path,
        ])
        let settings = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true, tokensOf: ["auth"])
        try reader.validate("layer-auth")
        #expect(settings.internalTokens.token(of: "auth") == "s3cret-token")
        #expect(settings.database?.host == "h" && settings.database?.password == "p")
        #expect(reader.optional("LAYER_CA_KEY_FILE")?.hasSuffix("absent.key") == true)

        // An empty variable (compose's `LAYER_X: ${LAYER_X:-}`) leaves the file in charge.
        let empty = SettingsReader(["LAYER_INTERNAL_TOKEN": "", "LAYER_INTERNAL_TOKEN_FILE": token.path])
        #expect(empty.problems.isEmpty && empty.optional("LAYER_INTERNAL_TOKEN") == "s3cret-token")

        var twice = SettingsReader(["LAYER_INTERNAL_TOKEN": "a", "LAYER_INTERNAL_TOKEN_FILE": token.path])
        _ = twice.optional("LAYER_INTERNAL_TOKEN")
        #expect(twice.problems == ["LAYER_INTERNAL_TOKEN and LAYER_INTERNAL_TOKEN_FILE are both set; give one of them"])
        let missing = SettingsReader(["LAYER_OPERATOR_TOKEN_FILE": directory.appendingPathComponent("nothing").path])
        #expect(missing.problems.count == 1 && missing.problems[0].hasPrefix("LAYER_OPERATOR_TOKEN_FILE: cannot read"))
        #expect(missing.optional("LAYER_OPERATOR_TOKEN") == nil)
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

    @Test("IPv6 clients are bucketed by their /64, IPv4 clients by their address")
    func clientKeys() {
        let key = RateLimiter.key(for:)
        #expect(key("2001:db8:1:2::1") == key("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(key("2001:db8:1:2::1") == key("[2001:0db8:0001:0002:0000:0000:0000:0009]"))
        #expect(key("fe80::1%eth0") == key("fe80::2"))
        #expect(key("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(key("2001:db8:1:2::1") != key("2001:db8:1:3::1"))
        #expect(key("203.0.113.7") == "203.0.113.7")
        #expect(key("203.0.113.7") != key("203.0.113.8"))
        #expect(key("::ffff:203.0.113.7") == "203.0.113.7", "an IPv4-mapped address is its IPv4 address")
        #expect(key("unknown") == "unknown")
    }

    @Test("Two IPv6 addresses of one /64 draw on one bucket")
    func oneBucketPerIPv6Prefix() {
        let limiter = RateLimiter(.init(rate: 0.001, burst: 2))
        #expect(limiter.allow("2001:db8:aa:bb::1"))
        #expect(limiter.allow("2001:db8:aa:bb:1234::99"))
        #expect(!limiter.allow("2001:db8:aa:bb::ffff"), "the /64 spent its burst")
        #expect(limiter.allow("2001:db8:aa:bc::1"), "the next /64 has its own")
    }

    @Test("The table of buckets stays bounded, forgetting the least recently used client")
    func boundedLeastRecentlyUsed() {
        // Empty buckets that never refill: a forgotten client is seen in that it gets a fresh one.
        let limiter = RateLimiter(.init(rate: 0.000_001, burst: 1), capacity: 3)
        for client in ["10.0.0.1", "10.0.0.2", "10.0.0.3"] { #expect(limiter.allow(client)) }
        #expect(!limiter.allow("10.0.0.1"), "used again: now the most recent")
        #expect(limiter.allow("10.0.0.4"), "a fourth client takes the place of the least recent, .2")
        #expect(limiter.trackedClients == 3)
        #expect(!limiter.allow("10.0.0.1"), "kept")
        #expect(!limiter.allow("10.0.0.3"), "kept")
        #expect(limiter.allow("10.0.0.2"), "forgotten, so its bucket is full again; .4 gives up its place")
        #expect(!limiter.allow("10.0.0.1"), "kept: .4 was the least recent")
        #expect(limiter.trackedClients == 3)
        for index in 0..<1000 { _ = limiter.allow("client \(index)") }
        #expect(limiter.trackedClients == 3)
    }
}

@Suite struct LRUTableTests {
    @Test("A full table makes room by forgetting the entry used least recently, reads and writes both counting as use")
    func evictsLeastRecentlyUsed() {
        var table = LRUTable<String, Int>(capacity: 2)
        table.set("a", 1)
        table.set("b", 2)
        #expect(table.use("a") == 1)
        table.set("c", 3)
        #expect(!table.contains("b"))
        #expect(table.use("a") == 1 && table.use("c") == 3)
        table.set("a", 10)
        table.set("d", 4)
        #expect(!table.contains("c"))
        #expect(table.use("a") == 10 && table.use("d") == 4)
        #expect(table.count == 2)
    }

    @Test("A table of one keeps the last entry")
    func capacityOne() {
        var table = LRUTable<Int, Int>(capacity: 1)
        for value in 0..<5 { table.set(value, value) }
        #expect(table.count == 1)
        #expect(table.use(4) == 4)
        #expect(table.use(3) == nil)
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
            // Milliseconds are kept, truncated; a Double of a date near 2100 adds some 1e-7 s of its own.
            #expect(abs(parsed.timeIntervalSince(date)) < 0.001 + 1e-6)
        }
    }
}
