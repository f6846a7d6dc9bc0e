import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Badges (`/apps/:app/users/:user/badge`): the external unread count the app's backend keeps for
/// a user, read back with the user's unread conversation and message counts. A change reaches the
/// user's connected devices as a `badge` signal, and their other devices that hold a push token as
/// a silent badge update through APNs or FCM.
extension ServerAPIController {
    struct BadgeBody: Decodable {
        var externalUnreadCount: Int?
        enum CodingKeys: String, CodingKey {
            case externalUnreadCount = "external_unread_count"
        }
        static let keys: Set<String> = ["external_unread_count"]
    }

    @Sendable func setBadge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.actingUserScope(request, context)
        let body = try await request.decodeJSON(BadgeBody.self, allowedKeys: BadgeBody.keys)
        guard let count = body.externalUnreadCount else {
            throw APIError(.missingProperty, "Set external_unread_count.", property: "external_unread_count")
        }
        guard (0...Int(Int32.max)).contains(count) else {
            throw APIError.invalid("external_unread_count", "external_unread_count is a whole number from 0 to \(Int32.max).")
        }
        try await domain.badges.setExternalCount(count, scope)
        return Response(status: .noContent)
    }

    @Sendable func getBadge(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.json(try await domain.badges.badge(try await domain.actingUserScope(request, context)))
    }
}
