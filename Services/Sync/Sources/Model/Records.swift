import Foundation
import LayerModels
import LayerServer
import PostgresNIO

// Rows of the sync schema as the service reads them.

struct IdentityRecord: Sendable {
    var userID: String
    var displayName: String?
    var avatarURL: String?
    var firstName: String?
    var lastName: String?
    var phoneNumber: String?
    var emailAddress: String?
    var publicKey: String?
    var identityType: String = "user"
    var metadata: [String: String] = [:]

    static let columns =
        "user_id, display_name, avatar_url, first_name, last_name, phone_number, email_address, public_key, identity_type, metadata::text"

    init(userID: String) { self.userID = userID }

    /// Leaves out how to reach the user (e-mail, phone), as for someone they blocked.
    mutating func withholdContactDetails() {
        emailAddress = nil
        phoneNumber = nil
    }

    init(row: PostgresRow) throws {
        let (userID, displayName, avatarURL, firstName, lastName, phone, email, publicKey, type, metadata) = try row.decode(
            (String, String?, String?, String?, String?, String?, String?, String?, String, String).self)
        self.userID = userID
        self.displayName = displayName
        self.avatarURL = avatarURL
        self.firstName = firstName
        self.lastName = lastName
        self.phoneNumber = phone
        self.emailAddress = email
        self.publicKey = publicKey
        self.identityType = type
        self.metadata = (try? storedJSONDecoder.decode([String: String].self, from: Data(metadata.utf8))) ?? [:]
    }
}

struct ConversationRecord: Sendable {
    var id: UUID
    var createdAt: Date
    var createdBy: String?
    var isDistinct: Bool
    var metadata: JSONValue
    var lastPosition: Int64
    var lastMessageAt: Date?
    var deletedAt: Date?
    /// Whether participants see each other's delivery and read states (the receipts switch).
    var receiptsEnabled = true

    static let columns =
        "c.id, c.created_at, c.created_by, c.is_distinct, c.metadata::text, c.last_position, c.last_message_at, c.deleted_at, c.receipts_enabled"
    /// How many columns `columns` names: a query may select more after them.
    static let columnCount = 9

    init(row: PostgresRow) throws {
        let (id, createdAt, createdBy, isDistinct, metadata, lastPosition, lastMessageAt, deletedAt, receiptsEnabled) =
            try row.decode((UUID, Date, String?, Bool, String, Int64, Date?, Date?, Bool).self)
        self.receiptsEnabled = receiptsEnabled
        self.id = id
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.isDistinct = isDistinct
        self.metadata = JSONValue(jsonText: metadata) ?? [:]
        self.lastPosition = lastPosition
        self.lastMessageAt = lastMessageAt
        self.deletedAt = deletedAt
    }
}

struct ParticipantRecord: Sendable {
    var conversationID: UUID
    var userID: String
    /// Set once the user was removed: they keep seeing positions up to here.
    var leftPosition: Int64?
    /// Positions up to here were deleted from this user's devices (`mode=my_devices`).
    var clearedPosition: Int64
    /// Deleted from this user's devices and not brought back by a newer message.
    var hidden: Bool
    var deliveredPosition: Int64
    var readPosition: Int64
    var privateMetadata: JSONValue
    /// For a removed participant: when they were removed, and the conversation as it was then,
    /// which is all they see of it from then on.
    var leftAt: Date?
    var leftView: LeftView?
    /// When they first joined; nil for one made up for rendering (``init(newMember:of:)``).
    var joinedAt: Date?
    /// Whether the participants of the conversation see each other's receipts (its switch).
    var receiptsEnabled = true

    var isCurrent: Bool { leftPosition == nil }

    /// The conversation as a participant left it: its metadata, and the others with their marks.
    struct LeftView: Codable, Sendable {
        var metadata: JSONValue
        var members: [Member]

        struct Member: Codable, Sendable {
            var userID: String
            var read: Int64
            var delivered: Int64
            var left: Int64?

            enum CodingKeys: String, CodingKey {
                case read, delivered, left
                case userID = "user_id"
            }
        }
    }

    static let columns =
        "p.conversation_id, p.user_id, p.left_position, p.cleared_position, p.hidden, p.delivered_position, p.read_position, "
        + "p.private_metadata::text, p.left_at, p.left_view::text, p.joined_at, "
        + "(SELECT c.receipts_enabled FROM sync.conversations c WHERE c.id = p.conversation_id)"

    init(row: PostgresRow) throws {
        let (
            conversationID, userID, left, cleared, hidden, delivered, read, privateMetadata, leftAt, leftView, joinedAt,
            receiptsEnabled
        ) = try row.decode((UUID, String, Int64?, Int64, Bool, Int64, Int64, String, Date?, String?, Date, Bool).self)
        self.receiptsEnabled = receiptsEnabled
        self.conversationID = conversationID
        self.userID = userID
        self.leftPosition = left
        self.clearedPosition = cleared
        self.hidden = hidden
        self.deliveredPosition = delivered
        self.readPosition = read
        self.privateMetadata = JSONValue(jsonText: privateMetadata) ?? [:]
        self.leftAt = leftAt
        self.leftView = leftView.flatMap { try? storedJSONDecoder.decode(LeftView.self, from: Data($0.utf8)) }
        self.joinedAt = joinedAt
    }

    /// Another participant as a removed one saw them when leaving, with the marks of then.
    init(member: LeftView.Member, of conversation: UUID) {
        self.init(newMember: member.userID, of: conversation)
        leftPosition = member.left
        deliveredPosition = member.delivered
        readPosition = member.read
    }

    /// A current participant who has read and received nothing yet.
    init(newMember userID: String, of conversation: UUID) {
        conversationID = conversation
        self.userID = userID
        leftPosition = nil
        clearedPosition = 0
        hidden = false
        deliveredPosition = 0
        readPosition = 0
        privateMetadata = [:]
    }

    /// Whether this participant may see the message at `position`.
    func sees(position: Int64) -> Bool {
        position > clearedPosition && (leftPosition.map { position <= $0 } ?? true)
    }
}

/// A message part as stored in the message row.
struct StoredPart: Codable, Sendable, Equatable {
    var id: UUID
    var mimeType: String
    var body: String?
    var encoding: String?
    var contentID: UUID?
    var size: Int64?
    /// When this part was last added or changed through the Server API's part routes.
    var updatedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, body, encoding, size
        case mimeType = "mime_type"
        case contentID = "content_id"
        case updatedAt = "updated_at"
    }
}

extension StoredPart {
    /// Read with ids parsed by hand: every message of a sync page decodes its parts, and
    /// `UUID`'s own decoding parses with `sscanf`.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func uuid(_ text: String, _ key: CodingKeys) throws -> UUID {
            guard let id = UUID(text: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not a UUID")
            }
            return id
        }
        self.init(
            id: try uuid(try container.decode(String.self, forKey: .id), .id),
            mimeType: try container.decode(String.self, forKey: .mimeType),
            body: try container.decodeIfPresent(String.self, forKey: .body),
            encoding: try container.decodeIfPresent(String.self, forKey: .encoding),
            contentID: try container.decodeIfPresent(String.self, forKey: .contentID).map { try uuid($0, .contentID) },
            size: try container.decodeIfPresent(Int64.self, forKey: .size),
            updatedAt: try container.decodeIfPresent(Date.self, forKey: .updatedAt))
    }
}

struct MessageRecord: Sendable {
    var id: UUID
    var conversationID: UUID
    var position: Int64
    var senderID: String?
    var senderName: String?
    var parts: [StoredPart]
    var notification: JSONValue?
    var sentAt: Date
    var updatedAt: Date?
    var deletedAt: Date?
    var offTheRecord = false

    static let columns =
        "m.id, m.conversation_id, m.position, m.sender_id, m.sender_name, m.parts::text, m.notification::text, m.sent_at, m.updated_at, m.deleted_at, m.off_the_record"
    /// How many columns `columns` names: a query may select more after them.
    static let columnCount = 11
}

extension MessageRecord {
    init(row: PostgresRow) throws {
        let (
            id, conversationID, position, senderID, senderName, parts, notification, sentAt, updatedAt, deletedAt, offTheRecord
        ) =
            try row.decode((UUID, UUID, Int64, String?, String?, String, String?, Date, Date?, Date?, Bool).self)
        self.offTheRecord = offTheRecord
        self.id = id
        self.conversationID = conversationID
        self.position = position
        self.senderID = senderID
        self.senderName = senderName
        self.parts = (try? storedJSONDecoder.decode([StoredPart].self, from: Data(parts.utf8))) ?? []
        self.notification = notification.flatMap(JSONValue.init(jsonText:))
        self.sentAt = sentAt
        self.updatedAt = updatedAt
        self.deletedAt = deletedAt
    }
}

/// One user's receipt of a message, with when it reached each status.
struct Receipt: Sendable {
    var status: ReceiptStatus
    var deliveredAt: Date?
    var readAt: Date?

    /// The status it had at `time`; nil if there was no receipt yet.
    func status(at time: Date) -> ReceiptStatus? {
        if let readAt, readAt <= time { return .read }
        if let deliveredAt, deliveredAt <= time { return .delivered }
        return nil
    }
}

/// Recipient status, in its only allowed order: sent < delivered < read.
enum ReceiptStatus: Int16, Comparable, Sendable {
    case sent = 0
    case delivered = 1
    case read = 2

    init?(name: String) {
        switch name {
        case "sent": self = .sent
        case "delivered", "delivery": self = .delivered
        case "read": self = .read
        default: return nil
        }
    }

    var name: String {
        switch self {
        case .sent: "sent"
        case .delivered: "delivered"
        case .read: "read"
        }
    }

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension JSONValue {
    init?(jsonText: String) {
        guard let value = try? storedJSONDecoder.decode(JSONValue.self, from: Data(jsonText.utf8)) else { return nil }
        self = value
    }
}

/// Reads the JSON the service itself stored (parts, metadata); one decoder serves every row.
let storedJSONDecoder = JSONDecoder()
