import Foundation

/// The app's user directory between the services: the sync service owns identities (a user of an
/// app exists when sync holds an identity for them); the auth service owns authentication (the
/// sessions, suspension and identity-token claims). Auth reports each sign-in's claims to sync,
/// asks sync about users for its Server API routes, and is told when an identity changes.
extension InternalAPI {
    /// `POST /internal/v1/identities/lookup` (sync service), a ``UsersRequest``: the identities of
    /// those of the users who exist, answered as ``IdentitiesResponse``.
    public static let identityLookupPath = "/internal/v1/identities/lookup"

    /// `POST /internal/v1/identities/claims` (sync service): the claims of identity tokens that
    /// opened sessions. Each creates the user's identity or brings it up to date: a claim that is
    /// present replaces the stored field, an absent one keeps it (so what the app's backend wrote
    /// through the Server API stays unless a later token says otherwise). Answered with
    /// ``ClaimsRecorded``.
    public static let identityClaimsPath = "/internal/v1/identities/claims"

    /// `POST /internal/v1/identities/changed` (auth service), a ``UsersRequest``: the sync service
    /// changed or removed these users' identities; every auth replica forgets what it cached about
    /// them. Answered with an ``Acknowledgement``.
    public static let identitiesChangedPath = "/internal/v1/identities/changed"

    /// `POST /internal/v1/blocks` (sync service): changes to one user's blocks, applied in order
    /// and all together or not at all. Answered with an ``Acknowledgement``.
    public static let blocksPath = "/internal/v1/blocks"

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

    /// A full identity as the sync service stores it.
    public struct DirectoryIdentity: Codable, Sendable, Equatable {
        public var userID: String
        public var displayName: String?
        public var avatarURL: String?
        public var firstName: String?
        public var lastName: String?
        public var phoneNumber: String?
        public var emailAddress: String?
        public var publicKey: String?
        /// `user` or `bot`.
        public var identityType: String
        public var metadata: [String: String]

        public init(
            userID: String, displayName: String? = nil, avatarURL: String? = nil, firstName: String? = nil,
            lastName: String? = nil, phoneNumber: String? = nil, emailAddress: String? = nil, publicKey: String? = nil,
            identityType: String = "user", metadata: [String: String] = [:]
        ) {
            self.userID = userID
            self.displayName = displayName
            self.avatarURL = avatarURL
            self.firstName = firstName
            self.lastName = lastName
            self.phoneNumber = phoneNumber
            self.emailAddress = emailAddress
            self.publicKey = publicKey
            self.identityType = identityType
            self.metadata = metadata
        }

        enum CodingKeys: String, CodingKey {
            case metadata
            case userID = "user_id"
            case displayName = "display_name"
            case avatarURL = "avatar_url"
            case firstName = "first_name"
            case lastName = "last_name"
            case phoneNumber = "phone_number"
            case emailAddress = "email_address"
            case publicKey = "public_key"
            case identityType = "identity_type"
        }
    }

    public struct IdentitiesResponse: Codable, Sendable, Equatable {
        public var identities: [DirectoryIdentity]
        public init(identities: [DirectoryIdentity]) { self.identities = identities }
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

    public struct ClaimsRecorded: Codable, Sendable, Equatable {
        /// The users whose identity was there and changed; a new identity is not listed (nobody
        /// can have kept it).
        public var changed: [String]
        public init(changed: [String]) { self.changed = changed }
    }

    public struct BlockChanges: Codable, Sendable, Equatable {
        public var appID: UUID
        /// The user whose blocks change.
        public var owner: String
        public var changes: [BlockChange]

        public init(appID: UUID, owner: String, changes: [BlockChange]) {
            self.appID = appID
            self.owner = owner
            self.changes = changes
        }

        enum CodingKeys: String, CodingKey {
            case owner, changes
            case appID = "app_id"
        }
    }

    /// `add` blocks the users named, `remove` lifts their blocks, `set` makes them the whole list.
    public struct BlockChange: Codable, Sendable, Equatable {
        public enum Kind: String, Codable, Sendable { case add, remove, set }
        public var operation: Kind
        public var userIDs: [String]

        public init(_ operation: Kind, _ userIDs: [String]) {
            self.operation = operation
            self.userIDs = userIDs
        }

        enum CodingKeys: String, CodingKey {
            case operation
            case userIDs = "user_ids"
        }
    }
}
