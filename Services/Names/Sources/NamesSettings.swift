import LayerServer

/// The name resolution service's own settings, read once from the environment.
public struct NamesSettings: ServiceSettings {
    /// Where the auth service answers, when it does not run in the same process.
    public var authURL: String
    /// The region whose numbering plan reads phone numbers written without a country code, for
    /// apps that have not chosen their own (ISO 3166 alpha-2).
    public var defaultRegion: String
    /// Resolutions (`/resolve`, `/route`, an address book's duplicates) a second per user, in
    /// bursts of three seconds' worth.
    public var resolveRate: Double
    /// Writes (imports, claims, policy changes) a second per user, in bursts of three seconds' worth.
    public var writeRate: Double

    public init(
        authURL: String = "http://127.0.0.1:8081", defaultRegion: String = "US", resolveRate: Double = 10,
        writeRate: Double = 5
    ) {
        self.authURL = authURL.hasSuffix("/") ? String(authURL.dropLast()) : authURL
        self.defaultRegion = defaultRegion
        self.resolveRate = resolveRate
        self.writeRate = writeRate
    }

    /// `LAYER_AUTH_URL`, `LAYER_NAMES_DEFAULT_REGION`, `LAYER_RATE_LIMIT_NAMES_RESOLVE` and
    /// `LAYER_RATE_LIMIT_NAMES_WRITES`.
    public static func read(_ reader: inout SettingsReader) -> NamesSettings {
        NamesSettings(
            authURL: reader.optional("LAYER_AUTH_URL") ?? "http://127.0.0.1:8081",
            defaultRegion: reader.optional("LAYER_NAMES_DEFAULT_REGION")?.uppercased() ?? "US",
            resolveRate: reader.double("LAYER_RATE_LIMIT_NAMES_RESOLVE", default: 10),
            writeRate: reader.double("LAYER_RATE_LIMIT_NAMES_WRITES", default: 5))
    }
}
