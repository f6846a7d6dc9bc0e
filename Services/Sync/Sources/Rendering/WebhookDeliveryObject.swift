import Foundation
import LayerModels

/// One event of a webhook's delivery log: what it was, how many attempts it took, the receiver's
/// last answer (status, error, latency), and when it was delivered or is tried next.
struct WebhookDeliveryObject: Encodable, Sendable {
    var eventID: String
    /// The recorded kind (its 1.0 name); ``type`` names it in the webhook's version.
    var kind: String
    var type = ""
    var occurredAt: Date
    var attempts: Int
    @Nullable var lastStatus: Int?
    @Nullable var lastError: String?
    @Nullable var latencyMS: Int?
    @Nullable var deliveredAt: Date?
    @Nullable var nextAttemptAt: Date?

    init(
        eventID: String, kind: String, occurredAt: Date, attempts: Int, lastStatus: Int?, lastError: String?,
        latencyMS: Int?, deliveredAt: Date?, nextAttemptAt: Date?
    ) {
        self.eventID = eventID
        self.kind = kind
        self.occurredAt = occurredAt
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.latencyMS = latencyMS
        self.deliveredAt = deliveredAt
        self.nextAttemptAt = nextAttemptAt
    }

    enum CodingKeys: String, CodingKey {
        case type, attempts
        case eventID = "event_id"
        case occurredAt = "occurred_at"
        case lastStatus = "last_status"
        case lastError = "last_error"
        case latencyMS = "latency_ms"
        case deliveredAt = "delivered_at"
        case nextAttemptAt = "next_attempt_at"
    }
}
