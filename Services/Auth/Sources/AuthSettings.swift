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
    public var syncURL: String

    public init(operatorToken: String, caSource: CASource, syncURL: String = "http://127.0.0.1:8082") {
        self.operatorToken = operatorToken
        self.caSource = caSource
        self.syncURL = syncURL.hasSuffix("/") ? String(syncURL.dropLast()) : syncURL
    }

    /// `LAYER_OPERATOR_TOKEN`; the CA from `LAYER_CA_CERTIFICATE_FILE` + `LAYER_CA_KEY_FILE` or kept
    /// in the database under `LAYER_CA_KEY_SECRET`; `LAYER_SYNC_URL`. (The rate limits of its routes are
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
        return AuthSettings(
            operatorToken: operatorToken, caSource: caSource,
            syncURL: reader.optional("LAYER_SYNC_URL") ?? "http://127.0.0.1:8082")
    }
}
