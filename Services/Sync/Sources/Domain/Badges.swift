import Foundation
import LayerModels
import LayerServer
import Logging

/// Badges and push-only notifications: what the app's backend tells a user's devices without a
/// message. Both reach the devices connected at that moment, on any replica, as signals over the
/// WebSocket or event stream, and the others that hold a push token through APNs or FCM (a badge
/// as a silent push).
struct Badges: Sendable {
    private let repositories: SyncRepositories

    init(repositories: SyncRepositories) {
        self.repositories = repositories
    }

    /// Sets the external unread count the app's backend keeps for the scope's user, and pushes
    /// the badge to their devices (best effort: devices read it again when they next ask).
    func setExternalCount(_ count: Int, _ scope: Scope) async throws {
        try await repositories.badges.setExternalCount(app: scope.app, user: scope.user, count: count, logger: scope.logger)
        try await repositories.pushNotifications.enqueueBadge(app: scope.app, user: scope.user, logger: scope.logger)
        do {
            let badge = try await badge(scope)
            let signal: JSONValue = [
                "type": "badge", "external_unread_count": .number(Double(badge.externalUnreadCount)),
                "unread_conversation_count": .number(Double(badge.unreadConversationCount)),
                "unread_message_count": .number(Double(badge.unreadMessageCount)),
            ]
            _ = try await PushChannel.publish(
                EphemeralPacket(type: "signal", body: Packets.json(signal), event: "signal"), app: scope.app,
                users: [scope.user], postgres: repositories.postgres, logger: scope.logger)
        } catch {
            scope.logger.warning("Could not push a badge", metadata: ["error": "\(error)"])
        }
    }

    /// The scope's user's badge: the external count with their unread conversations and messages.
    func badge(_ scope: Scope) async throws -> BadgeRepository.Badge {
        try await repositories.badges.badge(app: scope.app, user: scope.user, logger: scope.logger)
    }

    /// What APNs takes in one payload.
    static let maxNotificationBytes = 4096

    /// Pushes `notification` (an object) to each recipient's connected devices; it is not kept.
    func notify(_ recipients: [String], notification: JSONValue?, _ scope: Scope) async throws {
        guard let notification, notification != .null else {
            throw APIError(.missingProperty, "A push-only notification needs its notification.", property: "notification")
        }
        guard case .object = notification else { throw APIError.invalid("notification", "notification is an object.") }
        let text = Packets.json(notification)
        guard text.utf8.count <= Self.maxNotificationBytes else {
            throw APIError.invalid("notification", "notification is at most \(Self.maxNotificationBytes) bytes of JSON.")
        }
        try await repositories.pushNotifications.enqueueNotification(
            app: scope.app, users: recipients, notification: notification, logger: scope.logger)
        let signal = "{\"notification\":\(text),\"sent_at\":\"\(LayerTimestamp.string(Date()))\",\"type\":\"notification\"}"
        guard
            try await PushChannel.publish(
                EphemeralPacket(type: "signal", body: signal, event: "signal"), app: scope.app, manyUsers: recipients,
                postgres: repositories.postgres, logger: scope.logger)
        else {
            throw APIError.invalid("recipients", "A recipient's id is too long to deliver to.")
        }
    }
}
