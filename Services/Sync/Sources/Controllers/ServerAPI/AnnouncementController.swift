import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// The body of `POST /apps/:app/announcements`.
struct AnnouncementInput: Decodable, Sendable {
    var recipients: [JSONValue]?
    var senderID: String?
    var sender: MessageInput.SenderInput?
    var parts: [PartInput]?
    var notification: JSONValue?

    enum CodingKeys: String, CodingKey {
        case recipients, sender, parts, notification
        case senderID = "sender_id"
    }

    static let keys: Set<String> = ["recipients", "sender_id", "sender", "parts", "notification"]
}

extension ServerAPIController {
    /// Sends an announcement to 1 to 1000 recipients (identity ids or user ids) as a named
    /// system sender or as an existing user: 202 with the announcement in the system view.
    @Sendable func createAnnouncement(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let tag = try RequestTag.read(request)
        let body = try await request.decodeJSON(AnnouncementInput.self, limit: 512 * 1024, allowedKeys: AnnouncementInput.keys)
        guard let values = body.recipients else {
            throw APIError(.missingProperty, "An announcement needs recipients.", property: "recipients")
        }
        guard (1...AnnouncementRepository.maxAnnouncementRecipients).contains(values.count) else {
            throw APIError.invalid(
                "recipients", "An announcement has 1 to \(AnnouncementRepository.maxAnnouncementRecipients) recipients.")
        }
        var recipients: [String] = []
        for (index, value) in values.enumerated() {
            let user = try userID(named: value, property: "recipients.\(index)")
            if !recipients.contains(user) { recipients.append(user) }
        }
        let sender = try ServerSender.parse(senderID: body.senderID, sender: body.sender)
        let announcement = try await domain.announcements.send(
            .init(
                recipients: recipients, sender: sender.sender, senderProperty: sender.property, parts: body.parts,
                notification: body.notification), tag: tag, scope)
        return try Response.json(announcement, status: .accepted)
    }
}

/// The Client API of announcements (session-authenticated): a user lists, reads, acknowledges
/// and deletes the announcements sent to them.
struct AnnouncementController: Sendable {
    let domain: SyncDomain

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("announcements", use: list)
        router.get("announcements/:announcement", use: get)
        router.delete("announcements/:announcement", use: delete)
        router.post("announcements/:announcement/receipts", use: addReceipt)
    }

    @Sendable func list(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        return try Response.list(
            try await domain.announcements.list(paging: try Paging(request, collection: .announcements), scope))
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        return try Response.json(try await domain.announcements.announcement(id, scope))
    }

    @Sendable func delete(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        try await domain.announcements.delete(id, scope)
        return Response(status: .noContent)
    }

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        try await domain.announcements.addReceipt(id, status: try await request.receiptStatus(), scope)
        return Response(status: .noContent)
    }
}
