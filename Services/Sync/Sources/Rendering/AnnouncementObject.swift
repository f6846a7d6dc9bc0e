import Foundation
import LayerModels
import LayerServer

/// An announcement as the API renders it: shaped like a message with no conversation. Its
/// recipients see only their own status; the Server API (system view) sees every recipient.
struct AnnouncementObject: Encodable, Sendable {
    var id: String
    var url: String
    var receiptsURL: String
    var position: Int64
    /// Always null: an announcement belongs to no conversation.
    @Nullable var conversation: ConversationReference? = nil
    var parts: [PartObject]
    var sentAt: Date
    var sender: SenderObject
    /// The recipients' user ids, in the system view only; rendered as identity ids from 2.0.
    var recipients: [String]?
    /// Nil in the system view, which has no viewer.
    var isUnread: Bool?
    var recipientStatus: RecipientStatus
    @Nullable var notification: JSONValue?

    enum CodingKeys: String, CodingKey {
        case id, url, position, conversation, parts, sender, recipients, notification
        case receiptsURL = "receipts_url"
        case sentAt = "sent_at"
        case isUnread = "is_unread"
        case recipientStatus = "recipient_status"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(url, forKey: .url)
        try container.encode(receiptsURL, forKey: .receiptsURL)
        try container.encode(position, forKey: .position)
        try container.encode(_conversation, forKey: .conversation)
        try container.encode(parts, forKey: .parts)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(sender, forKey: .sender)
        let byIdentity = APIVersion.current.usesIdentities
        try container.encodeIfPresent(
            recipients.map { byIdentity ? $0.map(LayerID.identity(userID:)) : $0 }, forKey: .recipients)
        try container.encodeIfPresent(isUnread, forKey: .isUnread)
        try container.encode(recipientStatus, forKey: .recipientStatus)
        try container.encode(_notification, forKey: .notification)
    }
}

extension Presenter {
    /// Renders announcements for this presenter's viewer (nil: the system view).
    mutating func announcements(_ views: [AnnouncementView]) async throws -> [AnnouncementObject] {
        try await loadIdentities(views.compactMap(\.record.senderID))
        return views.map { view in
            let record = view.record
            let uri = LayerID(.announcements, record.id).uri
            let url = urls.announcement(record.id)
            var statuses = RecipientStatus()
            for (user, status) in view.statuses { statuses[user, identity: LayerID.identity(userID: user)] = status.name }
            if viewer == nil, let sender = record.senderID {
                statuses[sender, identity: LayerID.identity(userID: sender)] = ReceiptStatus.read.name
            }
            let sender: SenderObject =
                if let senderID = record.senderID { .identity(basicIdentity(senderID)) } else {
                    .system(name: record.senderName ?? "")
                }
            let parts = record.parts.enumerated().map { index, part in
                PartObject(
                    messageID: uri, messageURL: url, uuid: part.id, index: index, mimeType: part.mimeType, body: part.body,
                    encoding: part.encoding, content: content(of: part, conversation: nil), updatedAt: nil)
            }
            return AnnouncementObject(
                id: uri, url: url, receiptsURL: "\(url)/receipts", position: record.position, parts: parts,
                sentAt: record.sentAt, sender: sender,
                recipients: viewer == nil ? view.statuses.map(\.user) : nil,
                isUnread: viewer.map { _ in (view.statuses.first?.status ?? .read) < .read }, recipientStatus: statuses,
                notification: record.notification)
        }
    }
}
