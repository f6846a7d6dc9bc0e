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
        let app = try appID(context)
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
        if let notification = body.notification, notification != .null {
            guard case .object = notification else { throw APIError.invalid("notification", "notification is an object.") }
        }
        let repositories = service.repositories
        var id = UUID()
        if let tag {
            id = try await RequestTag.reserve(
                tag, app: app, collection: .announcements, repository: repositories.requestTags, logger: context.logger
            )
            .resource
        }
        var parts = try PartRules.validate(body.parts, messageID: id)
        if let user = sender.sender.userID,
            try await !repositories.identities.userExists(app: app, user: user, logger: context.logger)
        {
            throw APIError.invalid(sender.property, "'\(user)' is not a user of this app.")
        }
        parts = try await repositories.content.resolveContent(
            app: app, owner: sender.sender.userID, parts: parts, logger: context.logger)
        _ = try await repositories.announcements.createAnnouncement(
            app: app,
            AnnouncementRepository.NewAnnouncement(
                id: id, recipients: recipients, sender: sender.sender, parts: parts,
                notification: body.notification == .null ? nil : body.notification),
            logger: context.logger)
        let object = try await service.announcement(
            app: app, id: id, viewer: nil, urls: service.urls(request), logger: context.logger)
        return try Response.json(object, status: .accepted)
    }
}

/// The Client API of announcements (session-authenticated): a user lists, reads, acknowledges
/// and deletes the announcements sent to them.
struct AnnouncementController: Sendable {
    let service: Messaging

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("announcements", use: list)
        router.get("announcements/:announcement", use: get)
        router.delete("announcements/:announcement", use: delete)
        router.post("announcements/:announcement/receipts", use: addReceipt)
    }

    @Sendable func list(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let paging = try Paging(request, collection: .announcements)
        return try Response.list(
            try await service.announcements(
                app: app, user: user, paging: paging, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        return try Response.json(
            try await service.announcement(app: app, id: id, viewer: user, urls: service.urls(request), logger: context.logger))
    }

    @Sendable func delete(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        try await service.repositories.announcements.deleteAnnouncement(app: app, user: user, id: id, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        let status = try await request.receiptStatus()
        try await service.repositories.announcements.addAnnouncementReceipt(
            app: app, user: user, id: id, status: status, logger: context.logger)
        return Response(status: .noContent)
    }
}
