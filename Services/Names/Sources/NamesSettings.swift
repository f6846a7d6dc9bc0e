import LayerServer

/// The name resolution service's own settings, read once from the environment.
public struct NamesSettings: ServiceSettings {
    /// Where the auth service answers, when it does not run in the same process.
    public var authURL: String
    /// The region whose numbering plan reads phone numbers written without a country code, for
    /// apps that have not chosen their own (ISO 3166 alpha-2).
    public var defaultRegion: String

    public init(authURL: String = "http://127.0.0.1:8081", defaultRegion: String = "US") {
        self.authURL = authURL.hasSuffix("/") ? String(authURL.dropLast()) : authURL
        self.defaultRegion = defaultRegion
    }

    /// `LAYER_AUTH_URL` and `LAYER_NAMES_DEFAULT_REGION`.
    public static func read(_ reader: inout SettingsReader) -> NamesSettings {
        NamesSettings(
            authURL: reader.optional("LAYER_AUTH_URL") ?? "http://127.0.0.1:8081",
            defaultRegion: reader.optional("LAYER_NAMES_DEFAULT_REGION")?.uppercased() ?? "US")
    }
}
