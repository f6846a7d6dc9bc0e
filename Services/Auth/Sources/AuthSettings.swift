import Foundation
import LayerServer

/// The auth service's settings, read once from the environment.
public struct AuthSettings: ServiceSettings {
    public struct RateLimits: Sendable {
        public var nonces: RateLimiter.Limit
        public var sessions: RateLimiter.Limit
        public var certificates: RateLimiter.Limit

        public init(nonces: RateLimiter.Limit, sessions: RateLimiter.Limit, certificates: RateLimiter.Limit) {
            self.nonces = nonces
            self.sessions = sessions
            self.certificates = certificates
        }

        public static let standard = RateLimits(
            nonces: .init(rate: 20, burst: 60), sessions: .init(rate: 20, burst: 60),
            certificates: .init(rate: 2, burst: 10))
    }

    public enum CASource: Sendable {
        case database(secret: String)
        case files(certificate: String, key: String)
    }

    public var operatorToken: String
    public var caSource: CASource
    public var rateLimits: RateLimits

    public init(operatorToken: String, caSource: CASource, rateLimits: RateLimits = .standard) {
        self.operatorToken = operatorToken
        self.caSource = caSource
        self.rateLimits = rateLimits
    }

    /// `LAYER_OPERATOR_TOKEN`; the CA from `LAYER_CA_CERTIFICATE_FILE` + `LAYER_CA_KEY_FILE` or kept
    /// in the database under `LAYER_CA_KEY_SECRET`; `LAYER_RATE_LIMIT_{NONCES,SESSIONS,CERTIFICATES}`
    /// as requests per second per client address (bursts of three seconds' worth).
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
        func limit(_ name: String, _ standard: RateLimiter.Limit) -> RateLimiter.Limit {
            let rate = reader.double(name, default: standard.rate)
            return .init(rate: rate, burst: max(rate * 3, 1))
        }
        return AuthSettings(
            operatorToken: operatorToken, caSource: caSource,
            rateLimits: .init(
                nonces: limit("LAYER_RATE_LIMIT_NONCES", RateLimits.standard.nonces),
                sessions: limit("LAYER_RATE_LIMIT_SESSIONS", RateLimits.standard.sessions),
                certificates: limit("LAYER_RATE_LIMIT_CERTIFICATES", RateLimits.standard.certificates)))
    }
}
