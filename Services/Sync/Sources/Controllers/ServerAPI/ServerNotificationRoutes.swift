import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Push-only notifications (`POST /apps/:app/notifications`): a notification without a message.
/// It reaches each recipient's devices connected at that moment, on any replica, as a
/// `notification` signal over the WebSocket or event stream, and their other devices that hold a
/// push token through APNs or FCM. And the log of the app's recent push failures
/// (`GET /apps/:app/push_failures`).
extension ServerAPIController {
    struct NotificationBody: Decodable {
        var recipients: [JSONValue]?
        var notification: JSONValue?
        static let keys: Set<String> = ["recipients", "notification"]
    }

    static let maxNotificationRecipients = 1000

    @Sendable func sendNotification(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let body = try await request.decodeJSON(NotificationBody.self, limit: 256 * 1024, allowedKeys: NotificationBody.keys)
        guard let values = body.recipients else {
            throw APIError(.missingProperty, "A notification needs recipients.", property: "recipients")
        }
        guard (1...Self.maxNotificationRecipients).contains(values.count) else {
            throw APIError.invalid("recipients", "A notification has 1 to \(Self.maxNotificationRecipients) recipients.")
        }
        var recipients: [String] = []
        for (index, value) in values.enumerated() {
            let user = try userID(named: value, property: "recipients.\(index)")
            if !recipients.contains(user) { recipients.append(user) }
        }
        try await domain.badges.notify(recipients, notification: body.notification, scope)
        return Response(status: .accepted)
    }

    /// The most failures the log shows.
    static let maxPushFailures = 100

    @Sendable func pushFailures(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.json(try await domain.pushNotifications.failures(scope, limit: Self.maxPushFailures))
    }
}
