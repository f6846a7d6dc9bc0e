import Foundation
import LayerModels
import LayerServer

/// A delayed send of the Server API, as its 202 answers it: the id its message will have, where
/// it goes, and when. Until then the message is nowhere to be read.
struct ScheduledMessageObject: Encodable, Sendable {
    var id: String
    var conversation: ConversationReference
    /// When the request was accepted.
    var scheduledAt: Date
    /// When the message goes out.
    var sendAt: Date
    /// When its sender starts being shown typing; null without a typing indicator.
    @Nullable var typingIndicatorAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, conversation
        case scheduledAt = "scheduled_at"
        case sendAt = "send_at"
        case typingIndicatorAt = "typing_indicator_at"
    }
}

extension ScheduledMessageObject {
    init(_ record: ScheduledMessageRecord, urls: URLBuilder) {
        self.init(
            id: LayerID(.messages, record.id).uri,
            conversation: ConversationReference(
                id: LayerID(.conversations, record.conversationID).uri,
                url: urls.url(ServerAPIPath.conversation(app: record.appID, record.conversationID))),
            scheduledAt: record.createdAt, sendAt: record.sendAt, typingIndicatorAt: record.typingFrom)
    }
}
