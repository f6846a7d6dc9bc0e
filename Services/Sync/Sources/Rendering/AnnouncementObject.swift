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
    /// The recipients' identity ids, in the system view only.
    var recipients: [String]?
    /// Nil in the system view, which has no viewer.
    var isUnread: Bool?
    var recipientStatus: [String: String]
    @Nullable var notification: JSONValue?

    enum CodingKeys: String, CodingKey {
        case id, url, position, conversation, parts, sender, recipients, notification
        case receiptsURL = "receipts_url"
        case sentAt = "sent_at"
        case isUnread = "is_unread"
        case recipientStatus = "recipient_status"
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
            var statuses: [String: String] = [:]
            for (user, status) in view.statuses { statuses[LayerID.identity(userID: user)] = status.name }
            if viewer == nil, let sender = record.senderID {
                statuses[LayerID.identity(userID: sender)] = ReceiptStatus.read.name
            }
            let sender: SenderObject =
                if let senderID = record.senderID { .identity(basicIdentity(senderID)) } else {
                    .system(name: record.senderName ?? "")
                }
            let parts = record.parts.map { part in
                var content: ContentObject?
                if let contentID = part.contentID {
                    let download = links.url(.download, content: contentID, urls: urls)
                    content = ContentObject(
                        id: LayerID(.content, contentID).uri, size: part.size ?? 0, downloadURL: download.url,
                        expiration: download.expiration, refreshURL: urls.content(contentID))
                }
                return PartObject(
                    id: "\(uri)/parts/\(part.id.lowercased)", url: "\(url)/parts/\(part.id.lowercased)", messageURL: url,
                    mimeType: part.mimeType, body: part.body, encoding: part.encoding, content: content, updatedAt: nil)
            }
            return AnnouncementObject(
                id: uri, url: url, receiptsURL: "\(url)/receipts", position: record.position, parts: parts,
                sentAt: record.sentAt, sender: sender,
                recipients: viewer == nil ? view.statuses.map { LayerID.identity(userID: $0.user) } : nil,
                isUnread: viewer.map { _ in (view.statuses.first?.status ?? .read) < .read }, recipientStatus: statuses,
                notification: record.notification)
        }
    }
}
