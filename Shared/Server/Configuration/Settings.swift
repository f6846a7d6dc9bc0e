import Foundation
import HTTPTypes

/// Reads typed settings from the environment, collecting every problem so that a service that
/// cannot start says at once everything that is missing or wrong.
///
/// Any setting `LAYER_X` may instead be given as a file, `LAYER_X_FILE` naming it (a Docker or
/// Kubernetes secret mounted as a file): its content, without the trailing newline, is the value.
public struct SettingsReader {
    public let environment: [String: String]
    public var problems: [String] = []
    /// The values read from `LAYER_X_FILE` files, by the name of the setting (`LAYER_X`).
    private var fromFiles: [String: String] = [:]
    /// Settings whose own names end in `_FILE`: they are paths, not values given as files.
    static let pathSettings: Set<String> = ["LAYER_CA_CERTIFICATE_FILE", "LAYER_CA_KEY_FILE"]

    public init(_ environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
        for (variable, path) in environment.sorted(by: { $0.key < $1.key })
        where variable.hasPrefix("LAYER_") && variable.hasSuffix("_FILE") && !Self.pathSettings.contains(variable) {
            let name = String(variable.dropLast("_FILE".count))
            let path = path.trimmingCharacters(in: .whitespaces)
            guard !path.isEmpty else { continue }
            if let direct = environment[name], !direct.trimmingCharacters(in: .whitespaces).isEmpty {
                problems.append("\(name) and \(variable) are both set; give one of them")
                continue
            }
            do {
                var value = try String(contentsOfFile: path, encoding: .utf8)
                while value.hasSuffix("\n") || value.hasSuffix("\r") { value.removeLast() }
                fromFiles[name] = value
            } catch {
                problems.append("\(variable): cannot read \(path)")
            }
        }
    }

    /// The setting's value: the variable's, or else its file's; nil when neither is set or both are empty.
    public func optional(_ name: String) -> String? {
        for value in [environment[name], fromFiles[name]] {
            if let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty { return value }
        }
        return nil
    }

    public mutating func required(_ name: String, _ purpose: String) -> String {
        if let value = optional(name) { return value }
        problems.append("\(name) is not set (\(purpose))")
        return ""
    }

    public mutating func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        guard let text = optional(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            problems.append("\(name) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
            return value
        }
        return number
    }

    /// `true` or `false` (also `1`/`0`, `yes`/`no`).
    public mutating func boolean(_ name: String, default value: Bool) -> Bool {
        guard let text = optional(name)?.lowercased() else { return value }
        switch text {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default:
            problems.append("\(name) must be true or false, not '\(text)'")
            return value
        }
    }

    public mutating func double(_ name: String, default value: Double) -> Double {
        guard let text = optional(name) else { return value }
        guard let number = Double(text), number > 0 else {
            problems.append("\(name) must be a positive number, not '\(text)'")
            return value
        }
        return number
    }

    public func list(_ name: String) -> [String] {
        optional(name)?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
    }

    /// Throws when anything required was missing or malformed.
    public func validate(_ service: String) throws {
        if !problems.isEmpty { throw SettingsError(service: service, problems: problems) }
    }
}

public struct SettingsError: Error, CustomStringConvertible {
    public let service: String
    public let problems: [String]

    public init(service: String, problems: [String]) {
        self.service = service
        self.problems = problems
    }

    public var description: String {
        "\(service) cannot start:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

/// Settings every service shares; what only one service needs (its peers' URLs included) is in
/// that service's own settings.
public struct ServerSettings: Sendable {
    public var host: String
    public var port: Int
    public var database: DatabaseSettings?
    /// The tokens services present to each other on `/internal/v1/…`, one per calling service.
    public var internalTokens: InternalTokens
    public var realm: String
    public var introspectionCacheTTL: Duration
    /// The edge proxies whose forwarding headers are believed: `X-Forwarded-For`,
    /// `X-Forwarded-Proto`, `X-Forwarded-Host` and ``clientCertificateHeader``.
    public var trustedProxies: TrustedProxies
    /// The header in which a trusted proxy forwards the client certificate it verified, as
    /// URL-escaped PEM (nginx's `$ssl_client_escaped_cert`; ingress-nginx calls it `ssl-client-cert`).
    public var clientCertificateHeader: HTTPField.Name = .clientCertificate
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    public var publicBaseURL: String?
    /// How long a request may take to be answered (its response head; streamed bodies go on).
    /// Past it the client gets 503 `service_unavailable`; statements end at it too.
    public var requestTimeout: Duration = Self.defaultRequestTimeout
    public static let defaultRequestTimeout: Duration = .seconds(10)
    /// How long each readiness check may take before it counts as down: `GET /health/ready`
    /// answers within about this long, whatever is stuck.
    public var readinessTimeout: Duration = Self.defaultReadinessTimeout
    public static let defaultReadinessTimeout: Duration = .milliseconds(900)
    /// How long a connection may send nothing in the middle of a request, or sit idle between
    /// requests, and how long the first request's head may take to arrive.
    public var readTimeout: Duration = .seconds(30)
    /// How long a graceful shutdown may wait for requests in progress before it closes them.
    public var shutdownTimeout: Duration = .seconds(10)
    /// The limits of the abuse-prone rules; each has one bucket table per process.
    public var rateLimits: RateLimits
    /// The web origins browsers may call every app from (`LAYER_CORS_ORIGINS`); each app adds
    /// its own (`allowed_origins`).
    public var allowedOrigins: [OriginRule] = []

    public init(
        host: String = "127.0.0.1", port: Int = 8080, database: DatabaseSettings? = nil,
        internalTokens: InternalTokens = .random(), realm: String = "layerline",
        introspectionCacheTTL: Duration = .seconds(5), trustedProxies: TrustedProxies = .none,
        tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil, publicBaseURL: String? = nil,
        rateLimits: RateLimits = .standard
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.internalTokens = internalTokens
        self.realm = realm
        self.introspectionCacheTTL = introspectionCacheTTL
        self.trustedProxies = trustedProxies
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.publicBaseURL = publicBaseURL
        self.rateLimits = rateLimits
    }

    /// Reads `LAYER_*` variables (`LAYER_RATE_LIMIT_*` among them, since the rules span services).
    /// `defaultPort` is the service's own port when run alone. With `requireDatabase` (a service
    /// in production), the internal tokens of `tokensOf` are required too: the service's own and
    /// those of the services that call it.
    public static func read(
        _ reader: inout SettingsReader, defaultPort: Int, requireDatabase: Bool, tokensOf services: [String] = []
    ) -> ServerSettings {
        var database: DatabaseSettings?
        let maxConnections = reader.integer("LAYER_DATABASE_MAX_CONNECTIONS", default: 20, in: 1...500)
        if let url = reader.optional("LAYER_DATABASE_URL") {
            database = DatabaseSettings(url: url, maxConnections: maxConnections)
            if database == nil { reader.problems.append("LAYER_DATABASE_URL is not a postgres:// URL") }
        } else if requireDatabase {
            _ = reader.required("LAYER_DATABASE_URL", "the PostgreSQL URL, postgres://user:password@host:5432/db")
        }
        let internalTokens = InternalTokens.read(&reader, required: requireDatabase ? services : [])
        let tlsCertificate = reader.optional("LAYER_TLS_CERTIFICATE")
        let tlsKey = reader.optional("LAYER_TLS_KEY")
        if (tlsCertificate == nil) != (tlsKey == nil) {
            reader.problems.append("LAYER_TLS_CERTIFICATE and LAYER_TLS_KEY must be set together")
        }
        var invalidProxies: [String] = []
        let trustedProxies = TrustedProxies(parsing: reader.list("LAYER_TRUSTED_PROXIES"), invalid: &invalidProxies)
        if !invalidProxies.isEmpty {
            reader.problems.append(
                "LAYER_TRUSTED_PROXIES takes addresses and CIDR ranges (10.0.0.7, 10.244.0.0/16, fd00::/8), not "
                    + invalidProxies.map { "'\($0)'" }.joined(separator: ", "))
        }
        let (allowedOrigins, invalidOrigins) = [OriginRule].parsing(reader.list("LAYER_CORS_ORIGINS"))
        if !invalidOrigins.isEmpty {
            reader.problems.append(
                "LAYER_CORS_ORIGINS takes web origins (https://app.example.com, http://localhost:*, https://*.example.com, *), not "
                    + invalidOrigins.map { "'\($0.text)'" }.joined(separator: ", "))
        }
        var certificateHeader = HTTPField.Name.clientCertificate
        if let name = reader.optional("LAYER_CLIENT_CERTIFICATE_HEADER") {
            if let header = HTTPField.Name(name) {
                certificateHeader = header
            } else {
                reader.problems.append("LAYER_CLIENT_CERTIFICATE_HEADER is not a header name: '\(name)'")
            }
        }
        let requestTimeout = Duration.milliseconds(reader.integer("LAYER_REQUEST_TIMEOUT_MS", default: 10_000, in: 100...600_000))
        database?.statementTimeout = requestTimeout
        var settings = ServerSettings(
            host: reader.optional("LAYER_HOST") ?? "0.0.0.0",
            port: reader.integer("LAYER_PORT", default: defaultPort, in: 0...65535),
            database: database,
            internalTokens: internalTokens,
            realm: reader.optional("LAYER_REALM") ?? "layerline",
            introspectionCacheTTL: .milliseconds(
                reader.integer("LAYER_INTROSPECTION_CACHE_MS", default: 5000, in: 0...300_000)),
            trustedProxies: trustedProxies,
            tlsCertificatePath: tlsCertificate, tlsKeyPath: tlsKey,
            publicBaseURL: reader.optional("LAYER_PUBLIC_URL"),
            rateLimits: RateLimits.read(&reader))
        settings.requestTimeout = requestTimeout
        settings.clientCertificateHeader = certificateHeader
        settings.allowedOrigins = allowedOrigins
        settings.readTimeout = .milliseconds(reader.integer("LAYER_READ_TIMEOUT_MS", default: 30_000, in: 1000...3_600_000))
        settings.readinessTimeout = .milliseconds(reader.integer("LAYER_READINESS_TIMEOUT_MS", default: 900, in: 50...60_000))
        settings.shutdownTimeout = .milliseconds(reader.integer("LAYER_SHUTDOWN_TIMEOUT_MS", default: 10_000, in: 0...600_000))
        return settings
    }
}
