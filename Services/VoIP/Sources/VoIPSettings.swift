import LayerServer

/// The VoIP signalling service's own settings, read once from the environment.
public struct VoIPSettings: ServiceSettings {
    /// Where the auth service answers, when it does not run in the same process.
    public var authURL: String
    /// Where the sync service answers (rings and hang-ups reach devices through it).
    public var syncURL: String
    /// Where the name resolution service answers, if there is one (calls are reported to its
    /// relationship graph); nil: not reported.
    public var namesURL: String?
    /// The UDP port of the STUN server; 0 picks a free one.
    public var stunPort: Int
    /// The address the STUN server binds (both IPv4 and IPv6 when it is `::`).
    public var stunHost: String
    /// The secret shared with the TURN server (coturn's `static-auth-secret`); nil: no TURN.
    public var turnSecret: String?
    /// The TURN and STUN URIs handed out with credentials.
    public var turnURIs: [String]
    /// How long TURN credentials stay valid. coturn cannot be told that a session ended, so this
    /// bounds how long a user who logged out (or was suspended) can still relay.
    public var turnTTLSeconds: Int
    /// How long a call rings before it is missed.
    public var ringTimeoutSeconds: Int
    /// How long a ringing call survives its caller having no device online.
    public var callerGraceSeconds: Int
    /// How many calls one user may place a minute (bursts of as many).
    public var callsPerMinute: Int
    /// How many answers a second the STUN server gives one source address (an IPv4 address or an
    /// IPv6 /64), in bursts of three seconds' worth; nil for any number (benchmarks).
    public var stunAnswersPerSecond: Double?

    public init(
        authURL: String = "http://127.0.0.1:8081", syncURL: String = "http://127.0.0.1:8082", namesURL: String? = nil,
        stunPort: Int = 3478, stunHost: String = "::", turnSecret: String? = nil, turnURIs: [String] = [],
        turnTTLSeconds: Int = 3600, ringTimeoutSeconds: Int = 60, callerGraceSeconds: Int = 15,
        callsPerMinute: Int = 10, stunAnswersPerSecond: Double? = 20
    ) {
        func trimmed(_ url: String) -> String { url.hasSuffix("/") ? String(url.dropLast()) : url }
        self.authURL = trimmed(authURL)
        self.syncURL = trimmed(syncURL)
        self.namesURL = namesURL.map(trimmed)
        self.stunPort = stunPort
        self.stunHost = stunHost
        self.turnSecret = turnSecret
        self.turnURIs = turnURIs
        self.turnTTLSeconds = turnTTLSeconds
        self.ringTimeoutSeconds = ringTimeoutSeconds
        self.callerGraceSeconds = callerGraceSeconds
        self.callsPerMinute = callsPerMinute
        self.stunAnswersPerSecond = stunAnswersPerSecond
    }

    /// The limit of ``stunAnswersPerSecond`` per source address; nil: none.
    public var stunSourceLimit: RateLimiter.Limit? {
        stunAnswersPerSecond.map { RateLimiter.Limit(rate: $0, burst: max($0 * 3, 1)) }
    }

    /// `LAYER_AUTH_URL`, `LAYER_SYNC_URL`, `LAYER_NAMES_URL`, `LAYER_STUN_PORT`, `LAYER_STUN_HOST`,
    /// `LAYER_TURN_SECRET`, `LAYER_TURN_URIS` (comma-separated), `LAYER_TURN_TTL`,
    /// `LAYER_RING_TIMEOUT`, `LAYER_CALLER_GRACE`, `LAYER_RATE_LIMIT_CALLS` (calls a minute per user),
    /// `LAYER_RATE_LIMIT_STUN` (STUN answers a second per source address).
    public static func read(_ reader: inout SettingsReader) -> VoIPSettings {
        VoIPSettings(
            authURL: reader.optional("LAYER_AUTH_URL") ?? "http://127.0.0.1:8081",
            syncURL: reader.optional("LAYER_SYNC_URL") ?? "http://127.0.0.1:8082",
            namesURL: reader.optional("LAYER_NAMES_URL"),
            stunPort: reader.integer("LAYER_STUN_PORT", default: 3478, in: 0...65535),
            stunHost: reader.optional("LAYER_STUN_HOST") ?? "::",
            turnSecret: reader.optional("LAYER_TURN_SECRET"),
            turnURIs: (reader.optional("LAYER_TURN_URIS") ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }.filter { !$0.isEmpty },
            turnTTLSeconds: reader.integer("LAYER_TURN_TTL", default: 3600, in: 60...604_800),
            ringTimeoutSeconds: reader.integer("LAYER_RING_TIMEOUT", default: 60, in: 1...3600),
            callerGraceSeconds: reader.integer("LAYER_CALLER_GRACE", default: 15, in: 1...3600),
            callsPerMinute: reader.integer("LAYER_RATE_LIMIT_CALLS", default: 10, in: 1...10_000),
            stunAnswersPerSecond: reader.double("LAYER_RATE_LIMIT_STUN", default: 20))
    }
}
