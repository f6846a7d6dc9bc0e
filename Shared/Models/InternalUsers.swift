import Foundation

/// The users of an app between the services. The sync service owns the user resource (a user of
/// an app exists when sync holds an identity for them); the auth service owns what only it knows,
/// the sessions and suspension, and answers for them through one call. Claims flow one way: auth
/// reports each sign-in's claims to sync.
extension InternalAPI {
    /// `POST /internal/v1/identities/claims` (sync service): the claims of identity tokens that
    /// opened sessions. Each creates the user's identity or brings it up to date: a claim that is
    /// present replaces the stored field, an absent one keeps it (so what the app's backend wrote
    /// through the Server API stays unless a later token says otherwise). Answered with an
    /// ``Acknowledgement``.
    public static let identityClaimsPath = "/internal/v1/identities/claims"

    /// `POST /internal/v1/accounts` (auth service), an ``AccountRequest``: does to one user's
    /// sessions what the request asks, if anything, and answers what the auth service knows of
    /// the user afterwards, an ``Account``.
    public static let accountPath = "/internal/v1/accounts"

    public struct AccountRequest: Codable, Sendable, Equatable {
        /// What to do; nil only reads.
        public enum Action: String, Codable, Sendable {
            /// Suspends the user (their sessions answer 403 and no new ones open until reinstated);
            /// a user who never signed in is recorded suspended.
            case suspend
            /// Lifts a suspension and clears the user's old sessions.
            case reinstate
            /// Revokes every session of the user.
            case endSessions = "end_sessions"
            /// Challenges every session of the user.
            case challenge
        }

        public var appID: UUID
        public var userID: String
        public var action: Action?

        public init(appID: UUID, userID: String, action: Action? = nil) {
            self.appID = appID
            self.userID = userID
            self.action = action
        }

        enum CodingKeys: String, CodingKey {
            case action
            case appID = "app_id"
            case userID = "user_id"
        }
    }

    /// One user as the auth service knows them.
    public struct Account: Codable, Sendable, Equatable {
        /// The user signed in at least once, or was suspended.
        public var known: Bool
        public var suspended: Bool
        /// The claims of their latest sign-in, when they signed in.
        public var claims: Identity?

        public init(known: Bool, suspended: Bool, claims: Identity?) {
            self.known = known
            self.suspended = suspended
            self.claims = claims
        }
    }

    /// `POST /internal/v1/blocks/between` (sync service): whether a user and others blocked one
    /// another (the VoIP service asks before it rings anyone). Answered with ``BlocksBetween``.
    public static let blocksBetweenPath = "/internal/v1/blocks/between"

    public struct BlocksBetweenRequest: Codable, Sendable, Equatable {
        public var appID: UUID
        public var userID: String
        /// The others, 1 to 1,000 of them.
        public var userIDs: [String]

        public init(appID: UUID, userID: String, userIDs: [String]) {
            self.appID = appID
            self.userID = userID
            self.userIDs = userIDs
        }

        enum CodingKeys: String, CodingKey {
            case appID = "app_id"
            case userID = "user_id"
            case userIDs = "user_ids"
        }
    }

    public struct BlocksBetween: Codable, Sendable, Equatable {
        /// Those of the others whom the user blocked.
        public var blocked: [String]
        /// Those of the others who blocked the user.
        public var blockedBy: [String]

        public init(blocked: [String], blockedBy: [String]) {
            self.blocked = blocked
            self.blockedBy = blockedBy
        }

        enum CodingKeys: String, CodingKey {
            case blocked
            case blockedBy = "blocked_by"
        }
    }

    public struct ClaimsReport: Codable, Sendable, Equatable {
        public var appID: UUID
        /// The claims, one entry per user.
        public var claims: [SignInClaims]

        public init(appID: UUID, claims: [SignInClaims]) {
            self.appID = appID
            self.claims = claims
        }

        enum CodingKeys: String, CodingKey {
            case claims
            case appID = "app_id"
        }
    }

    /// One user's identity-token claims, and when the latest sign-in they come from opened its
    /// session. A report can arrive late (it is retried, and replicas report at once); the sync
    /// service applies it only to an identity that nobody changed after that sign-in, so that an
    /// old token never undoes a newer edit.
    public struct SignInClaims: Codable, Sendable, Equatable {
        public var identity: Identity
        /// In microseconds since 1970, by the auth service's database clock.
        public var signedInAt: Int64

        public init(identity: Identity, signedInAt: Int64) {
            self.identity = identity
            self.signedInAt = signedInAt
        }

        enum CodingKeys: String, CodingKey {
            case identity
            case signedInAt = "signed_in_at_us"
        }
    }
}
