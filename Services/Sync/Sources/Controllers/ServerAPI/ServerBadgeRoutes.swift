import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Badges (`/apps/:app/users/:user/badge`): the external unread count the app's backend keeps for
/// a user, read back with the user's unread conversation and message counts. There is no APNs
/// here: a change reaches the user's connected devices as a `badge` signal instead.
extension ServerAPIController {
    struct BadgeBody: Decodable {
        var externalUnreadCount: Int?
        enum CodingKeys: String, CodingKey {
            case externalUnreadCount = "external_unread_count"
        }
        static let keys: Set<String> = ["external_unread_count"]
    }

    @Sendable func setBadge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        let body = try await request.decodeJSON(BadgeBody.self, allowedKeys: BadgeBody.keys)
        guard let count = body.externalUnreadCount else {
            throw APIError(.missingProperty, "Set external_unread_count.", property: "external_unread_count")
        }
        guard (0...Int(Int32.max)).contains(count) else {
            throw APIError.invalid("external_unread_count", "external_unread_count is a whole number from 0 to \(Int32.max).")
        }
        let badges = service.repositories.badges
        try await badges.setExternalCount(app: app, user: user, count: count, logger: context.logger)
        do {
            let badge = try await badges.badge(app: app, user: user, logger: context.logger)
            let signal: JSONValue = [
                "type": "badge", "external_unread_count": .number(Double(badge.externalUnreadCount)),
                "unread_conversation_count": .number(Double(badge.unreadConversationCount)),
                "unread_message_count": .number(Double(badge.unreadMessageCount)),
            ]
            _ = try await PushChannel.publish(
                EphemeralPacket(type: "signal", body: Packets.json(signal), event: "signal"), app: app, users: [user],
                postgres: service.repositories.postgres, logger: context.logger)
        } catch {
            // The badge is stored; devices read it again when they next ask.
            context.logger.warning("Could not push a badge", metadata: ["error": "\(error)"])
        }
        return Response(status: .noContent)
    }

    @Sendable func getBadge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (app, user) = try await existingUser(context)
        return try Response.json(try await service.repositories.badges.badge(app: app, user: user, logger: context.logger))
    }
}
