import Foundation
import LayerServer

/// The auth service's settings, read once from the environment.
public struct AuthSettings: ServiceSettings {
    public enum CASource: Sendable {
        case database(secret: String)
        case files(certificate: String, key: String)
    }

    public var operatorToken: String
    public var caSource: CASource
    /// Where the sync service answers, when it does not run in the same process: it is told at
    /// once when sessions end, so that it closes their push connections.
    /// The sync service also owns the app's users: it is told each sign-in's claims.
    public var syncURL: String
    /// How often the sign-ins that could not be reported to the sync service at once are tried
    /// again: the first retry after this long, each later one after twice as long as the one
    /// before, up to a minute.
    public var claimsReportInterval: Duration = .seconds(2)

    public init(operatorToken: String, caSource: CASource, syncURL: String = "http://127.0.0.1:8082") {
        self.operatorToken = operatorToken
        self.caSource = caSource
        self.syncURL = syncURL.hasSuffix("/") ? String(syncURL.dropLast()) : syncURL
    }

    /// `LAYER_OPERATOR_TOKEN`; the CA from `LAYER_CA_CERTIFICATE_FILE` + `LAYER_CA_KEY_FILE` or kept
    /// in the database under `LAYER_CA_KEY_SECRET`; `LAYER_SYNC_URL`; `LAYER_CLAIMS_REPORT_INTERVAL_MS`.
    /// (The rate limits of its routes are
    /// `ServerSettings.rateLimits`, since other services apply them too.)
    public static func read(_ reader: inout SettingsReader) -> AuthSettings {
        let operatorToken = reader.required("LAYER_OPERATOR_TOKEN", "the token of the operator API, /admin")
        let caSource: CASource
        if let certificate = reader.optional("LAYER_CA_CERTIFICATE_FILE") {
            caSource = .files(
                certificate: certificate, key: reader.required("LAYER_CA_KEY_FILE", "the device CA's private key (PEM)"))
        } else {
            caSource = .database(
                secret: reader.required("LAYER_CA_KEY_SECRET", "the secret that encrypts the device CA key at rest"))
        }
        var settings = AuthSettings(
            operatorToken: operatorToken, caSource: caSource,
            syncURL: reader.optional("LAYER_SYNC_URL") ?? "http://127.0.0.1:8082")
        settings.claimsReportInterval = .milliseconds(
            reader.integer("LAYER_CLAIMS_REPORT_INTERVAL_MS", default: 2000, in: 10...600_000))
        return settings
    }
}
