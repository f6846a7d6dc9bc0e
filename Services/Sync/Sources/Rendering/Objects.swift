import Foundation
import LayerModels
import LayerServer

// The objects of the Client and Server APIs as the sync service renders them. Empty attributes
// are written as explicit `null`s (`@Nullable`), as the original Server API did, so every object
// has one shape; a plain optional is left out when it is nil.

/// The URLs of the sync service's objects.
extension URLBuilder {
    func conversation(_ id: UUID) -> String { "\(base)/conversations/\(id.lowercased)" }
    func messages(of id: UUID) -> String { "\(conversation(id))/messages" }
    func message(_ id: UUID) -> String { "\(base)/messages/\(id.lowercased)" }
    func part(_ id: UUID, of message: UUID) -> String { "\(self.message(message))/parts/\(id.lowercased)" }
    func identity(_ userID: String) -> String {
        "\(base)/identities/\(userID.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!)"
    }
    func content(_ id: UUID) -> String { "\(base)/content/\(id.lowercased)" }
    func announcement(_ id: UUID) -> String { "\(base)/announcements/\(id.lowercased)" }
}

struct BasicIdentityObject: Encodable, Sendable, Equatable {
    var id: String
    var url: String
    var userID: String
    @Nullable var displayName: String?
    @Nullable var avatarURL: String?
    var identityType: String

    enum CodingKeys: String, CodingKey {
        case id, url
        case userID = "user_id"
        case displayName = "display_name"
        case avatarURL = "avatar_url"
        case identityType = "identity_type"
    }
}

/// A full identity: the basic fields and what the app's backend or the user's claims filled in.
struct IdentityObject: Encodable, Sendable {
    var basic: BasicIdentityObject
    var record: IdentityRecord

    enum CodingKeys: String, CodingKey {
        case firstName = "first_name"
        case lastName = "last_name"
        case phoneNumber = "phone_number"
        case emailAddress = "email_address"
        case publicKey = "public_key"
        case metadata
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
    }
}

/// The sender of a message: a user's identity, or a named system sender of the Server API.
enum SenderObject: Encodable, Sendable {
    case identity(BasicIdentityObject)
    case system(name: String)

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .identity(let identity):
            try identity.encode(to: encoder)
        case .system(let name):
            var container = encoder.container(keyedBy: BasicIdentityObject.CodingKeys.self)
            try container.encodeNil(forKey: .id)
            try container.encodeNil(forKey: .userID)
            try container.encode(name, forKey: .displayName)
            var named = encoder.container(keyedBy: NameKey.self)
            try named.encode(name, forKey: .name)
        }
    }

    private enum NameKey: String, CodingKey { case name }
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

struct PartObject: Encodable, Sendable {
    var id: String
    var url: String
    var messageURL: String
    var mimeType: String
    @Nullable var body: String?
    @Nullable var encoding: String?
    @Nullable var content: ContentObject?
    @Nullable var updatedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, url, body, encoding, content
        case messageURL = "message_url"
        case mimeType = "mime_type"
        case updatedAt = "updated_at"
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
    /// Left out when unknown.
    var receivedAt: Date?
    @Nullable var updatedAt: Date?
    var sender: SenderObject
    /// Nil (and left out) in the Server API's system view, which has no viewer.
    var isUnread: Bool?
    var recipientStatus: [String: String]
    @Nullable var notification: JSONValue?

    enum CodingKeys: String, CodingKey {
        case id, url, position, conversation, parts, sender, notification
        case receiptsURL = "receipts_url"
        case sentAt = "sent_at"
        case receivedAt = "received_at"
        case updatedAt = "updated_at"
        case isUnread = "is_unread"
        case recipientStatus = "recipient_status"
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
        try container.encode(participants, forKey: .participants)
        try container.encode(isDistinct, forKey: .distinct)
        try container.encode(metadata, forKey: .metadata)
        if let viewer {
            try container.encode(viewer.lastMessage, forKey: .lastMessage)
            try container.encode(viewer.unreadMessageCount, forKey: .unreadMessageCount)
            try container.encode(viewer.totalMessageCount, forKey: .totalMessageCount)
            try container.encode(viewer.privateMetadata, forKey: .privateMetadata)
        }
    }
}
