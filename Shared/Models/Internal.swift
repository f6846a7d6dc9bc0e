import Foundation

/// Request and response types of the internal HTTP API between services (`/internal/v1/…`).
public enum InternalAPI {
    /// The names of the services that others call, as the catalogue and the hosts know them.
    public enum Service {
        public static let auth = "auth"
        public static let sync = "sync"
        public static let names = "names"
        public static let voip = "voip"
        /// Every service, in the order of the catalogue.
        public static let all = [auth, sync, names, voip]
    }

    public static let introspectPath = "/internal/v1/introspect"
    public static let introspectManyPath = "/internal/v1/introspect/many"
    public static let relationshipsPath = "/internal/v1/relationships"

    /// `POST /internal/v1/relationships`: who messaged or called whom in an app, reported in
    /// batches by the services where it happens, for the name resolution service's graph.
    public struct Relationships: Codable, Sendable, Equatable {
        public var appID: UUID
        public var events: [Event]

        public init(appID: UUID, events: [Event]) {
            self.appID = appID
            self.events = events
        }

        public enum Kind: String, Codable, Sendable { case message, call }

        /// `from` reached each of `to` once.
        public struct Event: Codable, Sendable, Equatable {
            public var from: String
            public var to: [String]
            public var kind: Kind

            public init(from: String, to: [String], kind: Kind) {
                self.from = from
                self.to = to
                self.kind = kind
            }
        }

        enum CodingKeys: String, CodingKey {
            case events
            case appID = "app_id"
        }

        /// The answer: how many pairs of users the batch touched.
        public struct Answer: Codable, Sendable, Equatable {
            public var pairs: Int
            public init(pairs: Int) { self.pairs = pairs }
        }
    }
    public static let sessionsPath = "/internal/v1/sessions"

    /// `POST /internal/v1/introspect`: is this session token active, and for whom?
    public struct IntrospectRequest: Codable, Sendable {
        public var token: String
        public init(token: String) { self.token = token }
    }

    /// `POST /internal/v1/introspect/many`: several tokens in one request (at most
    /// ``IntrospectManyRequest/limit``), answered in their order with one lookup, for the sockets'
    /// periodic session checks.
    public struct IntrospectManyRequest: Codable, Sendable {
        public static let limit = 1000
        public var tokens: [String]
        public init(tokens: [String]) { self.tokens = tokens }
    }

    public struct IntrospectManyResponse: Codable, Sendable {
        public var sessions: [IntrospectResponse]
        public init(sessions: [IntrospectResponse]) { self.sessions = sessions }
    }

    /// The answer, in the manner of RFC 7662.
    public struct IntrospectResponse: Codable, Sendable, Equatable {
        public var active: Bool
        public var userID: String?
        public var appID: String?
        public var identity: Identity?
        public var expiresAt: Date?
        /// The certificate the session is bound to, if any (RFC 8705 `x5t#S256`).
        public var cnf: Confirmation?
        /// Why an inactive token is inactive: `unknown`, `expired`, `challenged`, `revoked`,
        /// `suspended`, `certificate_revoked`.
        public var reason: String?

        public init(
            active: Bool, userID: String? = nil, appID: String? = nil, identity: Identity? = nil,
            expiresAt: Date? = nil, cnf: Confirmation? = nil, reason: String? = nil
        ) {
            self.active = active
            self.userID = userID
            self.appID = appID
            self.identity = identity
            self.expiresAt = expiresAt
            self.cnf = cnf
            self.reason = reason
        }

        public static func inactive(_ reason: String) -> Self { .init(active: false, reason: reason) }

        enum CodingKeys: String, CodingKey {
            case active, identity, cnf, reason
            case userID = "user_id"
            case appID = "app_id"
            case expiresAt = "expires_at"
        }
    }

    public struct Confirmation: Codable, Sendable, Equatable {
        public var x5tS256: String
        public init(x5tS256: String) { self.x5tS256 = x5tS256 }
        enum CodingKeys: String, CodingKey { case x5tS256 = "x5t#S256" }
    }

    /// The identity fields that the auth service learns from identity-token claims.
    public struct Identity: Codable, Sendable, Equatable {
        public var userID: String
        public var displayName: String?
        public var avatarURL: String?
        public var firstName: String?
        public var lastName: String?

        public init(
            userID: String, displayName: String? = nil, avatarURL: String? = nil,
            firstName: String? = nil, lastName: String? = nil
        ) {
            self.userID = userID
            self.displayName = displayName
            self.avatarURL = avatarURL
            self.firstName = firstName
            self.lastName = lastName
        }

        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case displayName = "display_name"
            case avatarURL = "avatar_url"
            case firstName = "first_name"
            case lastName = "last_name"
        }
    }

    /// `POST /internal/v1/sessions`: trade an identity token for a session on behalf of a client
    /// that sent `Authorization: Layer identity-token="…"` to any service.
    public struct CreateSessionRequest: Codable, Sendable {
        public var identityToken: String
        public var certificateThumbprint: String?
        public init(identityToken: String, certificateThumbprint: String?) {
            self.identityToken = identityToken
            self.certificateThumbprint = certificateThumbprint
        }
        enum CodingKeys: String, CodingKey {
            case identityToken = "identity_token"
            case certificateThumbprint = "certificate_thumbprint"
        }
    }

    public struct CreateSessionResponse: Codable, Sendable {
        public var sessionToken: String
        public var ttlSeconds: Int
        public var session: IntrospectResponse
        public init(sessionToken: String, ttlSeconds: Int, session: IntrospectResponse) {
            self.sessionToken = sessionToken
            self.ttlSeconds = ttlSeconds
            self.session = session
        }
        enum CodingKeys: String, CodingKey {
            case session
            case sessionToken = "session_token"
            case ttlSeconds = "ttl_seconds"
        }
    }

    /// `POST /internal/v1/nonces`: a fresh nonce for a 401 challenge raised by another service.
    public static let noncesPath = "/internal/v1/nonces"

    public struct NonceResponse: Codable, Sendable {
        public var nonce: String
        public init(nonce: String) { self.nonce = nonce }
    }

    /// `POST /internal/v1/signals` (sync service): push an ephemeral signal to every connected
    /// device of these users, on whichever replica they are connected.
    public static let signalsPath = "/internal/v1/signals"

    public struct SignalRequest: Codable, Sendable {
        public var appID: UUID
        public var userIDs: [String]
        /// Any JSON object; devices receive it as the body of a `signal` packet.
        public var signal: JSONValue
        /// With ``replaySeconds``: the signal is also kept under this key for that long, and sent
        /// to each device of these users that connects meanwhile (a call still ringing). A later
        /// signal under the same key replaces it, or with 0 seconds clears it.
        public var replayKey: String?
        public var replaySeconds: Int?

        public init(appID: UUID, userIDs: [String], signal: JSONValue, replayKey: String? = nil, replaySeconds: Int? = nil) {
            self.appID = appID
            self.userIDs = userIDs
            self.signal = signal
            self.replayKey = replayKey
            self.replaySeconds = replaySeconds
        }

        enum CodingKeys: String, CodingKey {
            case signal
            case appID = "app_id"
            case userIDs = "user_ids"
            case replayKey = "replay_key"
            case replaySeconds = "replay_seconds"
        }
    }

    /// `POST /internal/v1/users/known` (auth service): which of these users the app knows (they
    /// signed in at least once) and are not suspended.
    public static let knownUsersPath = "/internal/v1/users/known"

    /// A question about some users of an app (`users/known`, `devices`).
    public struct UsersRequest: Codable, Sendable {
        public var appID: UUID
        public var userIDs: [String]

        public init(appID: UUID, userIDs: [String]) {
            self.appID = appID
            self.userIDs = userIDs
        }

        enum CodingKeys: String, CodingKey {
            case appID = "app_id"
            case userIDs = "user_ids"
        }
    }

    public struct KnownUsersResponse: Codable, Sendable, Equatable {
        public var known: [String]
        public init(known: [String]) { self.known = known }
    }

    /// `POST /internal/v1/devices` (sync service): how many devices each of these users has
    /// connected on any replica now (WebSockets and event streams).
    public static let devicesPath = "/internal/v1/devices"

    public struct DevicesResponse: Codable, Sendable, Equatable {
        /// Devices per user; a user with none is not listed.
        public var devices: [String: Int]
        public init(devices: [String: Int]) { self.devices = devices }
    }

    public struct SignalResponse: Codable, Sendable, Equatable {
        /// The devices connected to any replica when the signal was sent.
        public var devices: Int
        /// The same per user (a user with none is not listed).
        public var users: [String: Int]?

        public init(devices: Int, users: [String: Int]? = nil) {
            self.devices = devices
            self.users = users
        }
    }

    /// `POST /internal/v1/sessions/ended` (sync service): the auth service ended sessions of a
    /// user. Every replica forgets what it cached about the user's sessions and closes the push
    /// connections open with those that ended. Answered 202 with an ``Acknowledgement``.
    public static let sessionsEndedPath = "/internal/v1/sessions/ended"

    public struct SessionsEnded: Codable, Sendable, Equatable {
        public var appID: UUID
        public var userID: String
        /// Why, in the words of introspection: `revoked` (logged out or revoked), `challenged`,
        /// `suspended` or `certificate_revoked`.
        public var reason: String
        /// The sessions that ended, each named by the base64url SHA-256 of its token (never the
        /// token); nil when every session of the user did.
        public var sessions: [String]?

        public init(appID: UUID, userID: String, reason: String, sessions: [String]? = nil) {
            self.appID = appID
            self.userID = userID
            self.reason = reason
            self.sessions = sessions
        }

        enum CodingKeys: String, CodingKey {
            case reason, sessions
            case appID = "app_id"
            case userID = "user_id"
        }
    }

    /// The empty answer to a notice.
    public struct Acknowledgement: Codable, Sendable {
        public init() {}
    }

    /// `POST /internal/v1/app-tokens/verify`: is this a live Server API token of this app?
    public static let appTokensPath = "/internal/v1/app-tokens/verify"

    public struct AppTokenRequest: Codable, Sendable {
        public var appID: UUID
        public var token: String
        public init(appID: UUID, token: String) {
            self.appID = appID
            self.token = token
        }
        enum CodingKeys: String, CodingKey {
            case token
            case appID = "app_id"
        }
    }

    public struct AppTokenResponse: Codable, Sendable {
        public var valid: Bool
        public init(valid: Bool) { self.valid = valid }
    }

    /// `POST /internal/v1/origins` (empty body): every app's allowed web origins (CORS).
    public static let originsPath = "/internal/v1/origins"

    public struct AppOrigins: Codable, Sendable, Equatable {
        public var apps: [App]
        public init(apps: [App]) { self.apps = apps }

        public struct App: Codable, Sendable, Equatable {
            public var appID: UUID
            public var origins: [String]
            public init(appID: UUID, origins: [String]) {
                self.appID = appID
                self.origins = origins
            }
            enum CodingKeys: String, CodingKey {
                case origins
                case appID = "app_id"
            }
        }
    }
}
