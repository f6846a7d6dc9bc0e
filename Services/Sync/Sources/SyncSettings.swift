import LayerServer

/// The sync service's own settings, read once from the environment.
public struct SyncSettings: Sendable {
    /// The largest rich-content upload, in bytes.
    public var maxContentBytes: Int
    public var push: PushSettings
    /// Where the auth service answers, when it does not run in the same process.
    public var authURL: String

    public init(
        maxContentBytes: Int = 50 * 1024 * 1024, push: PushSettings = PushSettings(),
        authURL: String = "http://127.0.0.1:8081"
    ) {
        self.maxContentBytes = maxContentBytes
        self.push = push
        self.authURL = authURL.hasSuffix("/") ? String(authURL.dropLast()) : authURL
    }

    /// `LAYER_CONTENT_MAX_BYTES`, `LAYER_AUTH_URL` and the push settings (`LAYER_PUSH_*`).
    public static func read(_ reader: inout SettingsReader) -> SyncSettings {
        SyncSettings(
            maxContentBytes: reader.integer("LAYER_CONTENT_MAX_BYTES", default: 50 * 1024 * 1024, in: 1...(1 << 40)),
            push: PushSettings.read(&reader),
            authURL: reader.optional("LAYER_AUTH_URL") ?? "http://127.0.0.1:8081")
    }
}
