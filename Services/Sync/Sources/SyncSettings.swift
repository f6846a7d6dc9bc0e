import LayerServer

/// The sync service's own settings, read once from the environment.
public struct SyncSettings: ServiceSettings {
    /// The largest rich-content upload, in bytes.
    public var maxContentBytes: Int
    /// How many bytes of content one user may keep stored (uploads in progress count with their
    /// declared size).
    public var contentQuotaBytes: Int64 = 1 << 30
    /// How many uploads one user may have in progress at once on one replica.
    public var uploadsPerUser: Int = 4
    /// How long uploaded content that no message or announcement refers to is kept, and how
    /// long an upload slot may stay empty, before they are collected.
    public var contentGrace: Duration = .seconds(24 * 3600)
    public var push: PushSettings
    /// Where the auth service answers, when it does not run in the same process.
    public var authURL: String
    /// Where the name resolution service answers, when it does not run in the same process; who
    /// messaged whom is reported there. Nil (and not in the same process): not reported.
    public var namesURL: String?
    /// The key of signed content links (and of the placeholder of pushed URLs), the same on every
    /// replica and nobody else's; by default one made for this process, which a test's replicas
    /// share.
    public var contentLinkSecret: String = Self.processSecret
    static let processSecret = Secrets.randomToken()
    /// Whether webhooks may point at loopback and private addresses (and then over plain http):
    /// for development (`layer dev` allows them), never where apps are not trusted with the network.
    public var webhookPrivateTargets = false
    /// How long a webhook's receiver has to answer a delivery with a 2xx.
    public var webhookTimeout: Duration = .seconds(5)
    /// How long a webhook's deliveries may keep failing before it turns inactive.
    public var webhookRetryWindow: Duration = .seconds(30 * 60)
    /// How long a webhook's events are kept: undelivered ones for an activate or a resume,
    /// delivered ones for the delivery log and replays.
    public var webhookKeep: Duration = .seconds(24 * 3600)
    /// Where APNs and FCM answer, and how long a push may take.
    public var pushProviders = PushProviderSettings()

    public init(
        maxContentBytes: Int = 50 * 1024 * 1024, push: PushSettings = PushSettings(),
        authURL: String = "http://127.0.0.1:8081"
    ) {
        self.maxContentBytes = maxContentBytes
        self.push = push
        self.authURL = authURL.hasSuffix("/") ? String(authURL.dropLast()) : authURL
    }

    /// `LAYER_CONTENT_MAX_BYTES`, `LAYER_CONTENT_QUOTA_BYTES`, `LAYER_UPLOADS_PER_USER`,
    /// `LAYER_CONTENT_GRACE_SECONDS`, `LAYER_AUTH_URL`, `LAYER_NAMES_URL`, `LAYER_CONTENT_LINK_SECRET`
    /// (required), `LAYER_WEBHOOK_PRIVATE_TARGETS`, `LAYER_WEBHOOK_TIMEOUT_MS`,
    /// `LAYER_WEBHOOK_RETRY_WINDOW_SECONDS`, `LAYER_WEBHOOK_KEEP_HOURS`, the push settings (`LAYER_PUSH_*`)
    /// and the push providers' (``PushProviderSettings``).
    public static func read(_ reader: inout SettingsReader) -> SyncSettings {
        var settings = SyncSettings(
            maxContentBytes: reader.integer("LAYER_CONTENT_MAX_BYTES", default: 50 * 1024 * 1024, in: 1...(1 << 40)),
            push: PushSettings.read(&reader),
            authURL: reader.optional("LAYER_AUTH_URL") ?? "http://127.0.0.1:8081")
        settings.contentQuotaBytes = Int64(reader.integer("LAYER_CONTENT_QUOTA_BYTES", default: 1 << 30, in: 1...(1 << 50)))
        settings.namesURL = reader.optional("LAYER_NAMES_URL").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        settings.uploadsPerUser = reader.integer("LAYER_UPLOADS_PER_USER", default: 4, in: 1...1000)
        settings.contentLinkSecret = reader.required(
            "LAYER_CONTENT_LINK_SECRET", "the key of signed content links, the same on every sync replica")
        settings.webhookPrivateTargets = reader.boolean("LAYER_WEBHOOK_PRIVATE_TARGETS", default: false)
        settings.webhookTimeout = .milliseconds(reader.integer("LAYER_WEBHOOK_TIMEOUT_MS", default: 5000, in: 100...60_000))
        settings.webhookRetryWindow = .seconds(
            reader.integer("LAYER_WEBHOOK_RETRY_WINDOW_SECONDS", default: 1800, in: 1...(7 * 86400)))
        settings.webhookKeep = .seconds(3600 * reader.integer("LAYER_WEBHOOK_KEEP_HOURS", default: 24, in: 1...(90 * 24)))
        settings.pushProviders = PushProviderSettings.read(&reader)
        settings.contentGrace = .seconds(
            reader.integer("LAYER_CONTENT_GRACE_SECONDS", default: 24 * 3600, in: 60...(365 * 86400)))
        return settings
    }
}

/// How push connections behave. Environment: `LAYER_PUSH_BUFFER` (packets a device may have
/// queued), `LAYER_PUSH_HEARTBEAT` (seconds between WebSocket pings; a socket that misses a pong
/// is closed), `LAYER_EVENTS_KEEPALIVE` (seconds between SSE comments), `LAYER_PUSH_STALL_TIMEOUT`
/// (seconds a device may keep a full outbox without taking anything from it before it is disconnected), `LAYER_PUSH_SESSION_CHECK`
/// (seconds between checks that each connection's session is still alive; the checks trust
/// introspection answers for the cache time, as HTTP requests do, so a session that ended stops
/// working on its connections within that time and one check more, even when the auth service's
/// notice is lost).
public struct PushSettings: Sendable {
    public var buffer: Int
    public var heartbeat: Duration
    public var keepAlive: Duration
    public var stallTimeout: Duration
    public var sessionCheck: Duration
    /// How long a typist may stay silent before the server moves their indicator on.
    public var typingTimeout: Duration
    /// The largest WebSocket frame a client may send.
    public var maxFrame: Int
    /// Changes read per user in one fan-out round.
    public var batch: Int

    public init(
        buffer: Int = 256, heartbeat: Duration = .seconds(30), keepAlive: Duration = .seconds(15),
        stallTimeout: Duration = .seconds(30), sessionCheck: Duration = .seconds(1), typingTimeout: Duration = .seconds(6),
        maxFrame: Int = 256 * 1024, batch: Int = 100
    ) {
        self.buffer = buffer
        self.heartbeat = heartbeat
        self.keepAlive = keepAlive
        self.stallTimeout = stallTimeout
        self.sessionCheck = sessionCheck
        self.typingTimeout = typingTimeout
        self.maxFrame = maxFrame
        self.batch = batch
    }

    public static func read(_ reader: inout SettingsReader) -> PushSettings {
        PushSettings(
            buffer: reader.integer("LAYER_PUSH_BUFFER", default: 256, in: 8...100_000),
            heartbeat: .seconds(reader.integer("LAYER_PUSH_HEARTBEAT", default: 30, in: 1...3600)),
            keepAlive: .seconds(reader.integer("LAYER_EVENTS_KEEPALIVE", default: 15, in: 1...3600)),
            stallTimeout: .seconds(reader.integer("LAYER_PUSH_STALL_TIMEOUT", default: 30, in: 1...3600)),
            sessionCheck: .seconds(reader.integer("LAYER_PUSH_SESSION_CHECK", default: 1, in: 1...86400)))
    }
}
