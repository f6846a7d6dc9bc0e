import Foundation
import LayerModels
import LayerServer

// The objects of the Client and Server APIs as the sync service renders them. Empty attributes
// are written as explicit `null`s (`@Nullable`), as the original Server API did, so every object
// has one shape; a plain optional is left out when it is nil.

/// The URLs of the sync service's objects: the Client API's paths, or, when rendering for the
/// Server API (``URLBuilder/serverAPIApp``), the paths under `/apps/<app>` where the app's bearer
/// token reaches the same object.
extension URLBuilder {
    /// `/apps/<app>` in the Server API, nothing in the Client API.
    private var root: String { serverAPIApp.map { "\(base)/apps/\($0.lowercased)" } ?? base }

    func conversation(_ id: UUID) -> String { "\(root)/conversations/\(id.lowercased)" }
    func messages(of id: UUID) -> String { "\(conversation(id))/messages" }

    /// A message; in the Server API, the path of `viewer` acting on it, or (system view) its path
    /// in its conversation.
    func message(_ id: UUID, in conversation: UUID?, viewer: String?) -> String {
        if serverAPIApp != nil, let viewer {
            return "\(user(encoded: Self.encoded(viewer)))/messages/\(id.lowercased)"
        }
        if serverAPIApp != nil, let conversation { return "\(messages(of: conversation))/\(id.lowercased)" }
        return "\(base)/messages/\(id.lowercased)"
    }

    /// `/apps/<app>/users/<encoded user id>` (Server API).
    private func user(encoded: String) -> String { "\(root)/users/\(encoded)" }

    func identity(_ userID: String) -> String { identity(encoded: Self.encoded(userID)) }

    /// An identity by its percent-encoded user id: `/identities/<id>`, or in the Server API
    /// `/apps/<app>/users/<id>/identity`.
    func identity(encoded: String) -> String {
        serverAPIApp == nil ? "\(base)/identities/\(encoded)" : "\(user(encoded: encoded))/identity"
    }

    /// Rich content in the Client API, where its signed download links point in either API.
    func content(_ id: UUID) -> String { "\(base)/content/\(id.lowercased)" }

    /// Where fresh links to rich content are fetched: `/content/<id>`, or in the Server API
    /// `/apps/<app>/conversations/<conversation>/content/<id>`.
    func refresh(content id: UUID, conversation: UUID?) -> String {
        guard serverAPIApp != nil, let conversation else { return content(id) }
        return "\(self.conversation(conversation))/content/\(id.lowercased)"
    }

    func announcement(_ id: UUID) -> String { "\(root)/announcements/\(id.lowercased)" }

    static func encoded(_ userID: String) -> String {
        userID.addingPercentEncoding(withAllowedCharacters: .layerUnreserved) ?? userID
    }
}

struct BasicIdentityObject: Encodable, Sendable, Equatable {
    var id: String
    var url: String
    var userID: String
    @Nullable var displayName: String?
    @Nullable var avatarURL: String?
    var identityType: String
    /// The user view of the Server API (``UserObject``) shows the identity without its url.
    var showsURL = true

    enum CodingKeys: String, CodingKey {
        case id, url
        case userID = "user_id"
        case displayName = "display_name"
        case avatarURL = "avatar_url"
        case identityType = "identity_type"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if showsURL { try container.encode(url, forKey: .url) }
        try container.encode(userID, forKey: .userID)
        try container.encode(_displayName, forKey: .displayName)
        try container.encode(_avatarURL, forKey: .avatarURL)
        try container.encode(identityType, forKey: .identityType)
    }
}

/// A user of the app as the Server API's `GET /apps/<app>/users/<user>` shows them: their
/// identity (without its url) and whether they are suspended; in 1.x also the user id as `id`.
struct UserObject: Encodable, Sendable {
    var identity: IdentityObject
    var suspended: Bool

    enum CodingKeys: String, CodingKey { case id, identity, suspended }

    init(identity: IdentityObject, suspended: Bool) {
        self.identity = identity
        self.identity.basic.showsURL = false
        self.suspended = suspended
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !APIVersion.current.usesIdentities { try container.encode(identity.basic.userID, forKey: .id) }
        try container.encode(identity, forKey: .identity)
        try container.encode(suspended, forKey: .suspended)
    }
}

/// A full identity: the basic fields and what the app's backend or the user's claims filled in;
/// for a user who reads it, also the presence they see (the Server API's has none).
struct IdentityObject: Encodable, Sendable {
    var basic: BasicIdentityObject
    var record: IdentityRecord
    var presence: PresenceObject?

    enum CodingKeys: String, CodingKey {
        case firstName = "first_name"
        case lastName = "last_name"
        case phoneNumber = "phone_number"
        case emailAddress = "email_address"
        case publicKey = "public_key"
        case metadata, presence
    }

    func encode(to encoder: any Encoder) throws {
        try basic.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record.firstName, forKey: .firstName)
        try container.encode(record.lastName, forKey: .lastName)
        try container.encode(record.phoneNumber, forKey: .phoneNumber)
        try container.encode(record.emailAddress, forKey: .emailAddress)
        try container.encode(record.publicKey, forKey: .publicKey)
        try container.encode(record.metadata, forKey: .metadata)
        try container.encodeIfPresent(presence, forKey: .presence)
    }
}

/// A user's presence as one viewer sees it (reference 4.8).
struct PresenceObject: Encodable, Sendable, Equatable {
    var status: String
    @Nullable var lastSeenAt: Date?

    enum CodingKeys: String, CodingKey {
        case status
        case lastSeenAt = "last_seen_at"
    }
}

/// The sender of a message: a user's identity, or a named system sender of the Server API. In
/// 1.x either `{"user_id": …, "name": null}` or `{"user_id": null, "name": …}`.
enum SenderObject: Encodable, Sendable {
    case identity(BasicIdentityObject)
    case system(name: String)

    func encode(to encoder: any Encoder) throws {
        guard APIVersion.current.usesIdentities else {
            var container = encoder.container(keyedBy: LegacyKeys.self)
            switch self {
            case .identity(let identity):
                try container.encode(identity.userID, forKey: .userID)
                try container.encodeNil(forKey: .name)
            case .system(let name):
                try container.encodeNil(forKey: .userID)
                try container.encode(name, forKey: .name)
            }
            return
        }
        switch self {
        case .identity(let identity):
            try identity.encode(to: encoder)
        case .system(let name):
            var container = encoder.container(keyedBy: BasicIdentityObject.CodingKeys.self)
            try container.encodeNil(forKey: .id)
            try container.encodeNil(forKey: .userID)
            try container.encode(name, forKey: .displayName)
            var named = encoder.container(keyedBy: LegacyKeys.self)
            try named.encode(name, forKey: .name)
        }
    }

    private enum LegacyKeys: String, CodingKey {
        case name
        case userID = "user_id"
    }
}

/// Who has a message in which state: keyed by identity id, or in 1.x by user id.
struct RecipientStatus: Encodable, Sendable {
    /// user id → (identity id, status)
    private(set) var entries: [String: (identity: String, status: String)] = [:]

    subscript(user: String, identity identity: String) -> String? {
        get { entries[user]?.status }
        set { entries[user] = newValue.map { (identity, $0) } }
    }

    /// The status of `user`, whatever the version.
    func status(of user: String) -> String? { entries[user]?.status }

    func encode(to encoder: any Encoder) throws {
        let byIdentity = APIVersion.current.usesIdentities
        var container = encoder.container(keyedBy: DynamicKey.self)
        // Sorted, as every map of the API (the identity ids sort as their user ids do).
        for (user, entry) in entries.sorted(by: { $0.key < $1.key }) {
            try container.encode(entry.status, forKey: DynamicKey(byIdentity ? entry.identity : user))
        }
    }
}

/// A coding key made at run time, for maps keyed by ids.
struct DynamicKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct ContentObject: Encodable, Sendable {
    var id: String
    var size: Int64
    @Nullable var downloadURL: String?
    @Nullable var expiration: Date?
    @Nullable var refreshURL: String?
    @Nullable var uploadURL: String?

    enum CodingKeys: String, CodingKey {
        case id, size, expiration
        case downloadURL = "download_url"
        case refreshURL = "refresh_url"
        case uploadURL = "upload_url"
    }
}

/// A message part. 3.0 addresses it by its UUID, earlier versions by its index in the message.
struct PartObject: Encodable, Sendable {
    /// The message's id and URL, which the part's are made from.
    var messageID: String
    var messageURL: String
    var uuid: UUID
    var index: Int
    var mimeType: String
    @Nullable var body: String?
    @Nullable var encoding: String?
    @Nullable var content: ContentObject?
    @Nullable var updatedAt: Date?

    /// The last segment of the part's id and URL in the version being rendered.
    private var segment: String { APIVersion.current.hasPartIDs ? uuid.lowercased : String(index) }
    var id: String { "\(messageID)/parts/\(segment)" }
    var url: String { "\(messageURL)/parts/\(segment)" }

    enum CodingKeys: String, CodingKey {
        case id, url, body, encoding, content
        case messageURL = "message_url"
        case mimeType = "mime_type"
        case updatedAt = "updated_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(url, forKey: .url)
        try container.encode(messageURL, forKey: .messageURL)
        try container.encode(mimeType, forKey: .mimeType)
        try container.encode(_body, forKey: .body)
        try container.encode(_encoding, forKey: .encoding)
        try container.encode(_content, forKey: .content)
        try container.encode(_updatedAt, forKey: .updatedAt)
    }
}

struct ConversationReference: Encodable, Sendable {
    var id: String
    var url: String
}

struct MessageObject: Encodable, Sendable {
    var id: String
    var url: String
    var receiptsURL: String
    var position: Int64
    @Nullable var conversation: ConversationReference?
    var parts: [PartObject]
    var sentAt: Date
    /// Served by the Server API only (its user and system views); left out in the Client API.
    var receivedAt: Date?
    @Nullable var updatedAt: Date?
    var sender: SenderObject
    /// Nil (and left out) in the Server API's system view, which has no viewer.
    var isUnread: Bool?
    var recipientStatus: RecipientStatus
    @Nullable var notification: JSONValue?
    /// Sent off the record: the server neither indexes it nor shows its parts to anything but
    /// the devices of its participants.
    var offTheRecord: Bool

    enum CodingKeys: String, CodingKey {
        case id, url, position, conversation, parts, sender, notification
        case offTheRecord = "off_the_record"
        case receiptsURL = "receipts_url"
        case sentAt = "sent_at"
        case receivedAt = "received_at"
        case updatedAt = "updated_at"
        case isUnread = "is_unread"
        case recipientStatus = "recipient_status"
    }
}

extension MessageObject {
    /// The message as it may leave for anything but its participants' devices (webhooks): an
    /// off-the-record message's parts without their bodies and content.
    var withheld: MessageObject {
        guard offTheRecord else { return self }
        var message = self
        for index in message.parts.indices {
            message.parts[index].body = nil
            message.parts[index].encoding = nil
            message.parts[index].content = nil
        }
        return message
    }
}

struct ConversationObject: Encodable, Sendable {
    var id: String
    var url: String
    var messagesURL: String
    var createdAt: Date
    var participants: [BasicIdentityObject]
    var isDistinct: Bool
    var metadata: JSONValue
    var receiptsEnabled: Bool
    /// The per-viewer fields; absent in the Server API's system view.
    var viewer: ViewerFields?

    struct ViewerFields: Sendable {
        var lastMessage: MessageObject?
        var unreadMessageCount: Int
        var totalMessageCount: Int
        var privateMetadata: JSONValue
    }

    enum CodingKeys: String, CodingKey {
        case id, url, participants, distinct, metadata
        case receiptsEnabled = "receipts_enabled"
        case messagesURL = "messages_url"
        case createdAt = "created_at"
        case lastMessage = "last_message"
        case unreadMessageCount = "unread_message_count"
        case totalMessageCount = "total_message_count"
        case privateMetadata = "private_metadata"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(url, forKey: .url)
        try container.encode(messagesURL, forKey: .messagesURL)
        try container.encode(createdAt, forKey: .createdAt)
        if APIVersion.current.usesIdentities {
            try container.encode(participants, forKey: .participants)
        } else {
            try container.encode(participants.map(\.userID), forKey: .participants)
        }
        try container.encode(isDistinct, forKey: .distinct)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(receiptsEnabled, forKey: .receiptsEnabled)
        if let viewer {
            try container.encode(viewer.lastMessage, forKey: .lastMessage)
            try container.encode(viewer.unreadMessageCount, forKey: .unreadMessageCount)
            try container.encode(viewer.totalMessageCount, forKey: .totalMessageCount)
            try container.encode(viewer.privateMetadata, forKey: .privateMetadata)
        }
    }
}
