import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// An announcement as the API renders it: shaped like a message with no conversation. Its
/// recipients see only their own status; the Server API (system view) sees every recipient.
struct AnnouncementObject: Encodable, Sendable {
    var id: String
    var url: String
    var receiptsURL: String
    var position: Int64
    var parts: [PartObject]
    var sentAt: Date
    var sender: SenderObject
    /// The recipients' identity ids, in the system view only.
    var recipients: [String]?
    /// Nil in the system view, which has no viewer.
    var isUnread: Bool?
    var recipientStatus: [String: String]
    var notification: JSONValue?

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
        try container.encodeNil(forKey: .conversation)
        try container.encode(parts, forKey: .parts)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(sender, forKey: .sender)
        try container.encodeIfPresent(recipients, forKey: .recipients)
        try container.encodeIfPresent(isUnread, forKey: .isUnread)
        try container.encode(recipientStatus, forKey: .recipientStatus)
        try container.encode(notification, forKey: .notification)
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
            if viewer == nil, let sender = record.senderID { statuses[LayerID.identity(userID: sender)] = ReceiptStatus.read.name }
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
            throw APIError.invalid("recipients", "An announcement has 1 to \(AnnouncementRepository.maxAnnouncementRecipients) recipients.")
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
        let store = service.store
        var id = UUID()
        if let tag {
            id = try await RequestTag.reserve(tag, app: app, collection: .announcements, repository: store.requestTags, logger: context.logger)
                .resource
        }
        var parts = try PartRules.validate(body.parts, messageID: id)
        if let user = sender.sender.userID, try await !store.identities.userExists(app: app, user: user, logger: context.logger) {
            throw APIError.invalid(sender.property, "'\(user)' is not a user of this app.")
        }
        parts = try await store.content.resolveContent(app: app, owner: sender.sender.userID, parts: parts, logger: context.logger)
        _ = try await store.announcements.createAnnouncement(
            app: app,
            AnnouncementRepository.NewAnnouncement(
                id: id, recipients: recipients, sender: sender.sender, parts: parts,
                notification: body.notification == .null ? nil : body.notification),
            logger: context.logger)
        let urls = service.urls(request)
        let object = try await store.read(logger: context.logger) { connection in
            let view = try await store.announcements.announcement(app: app, id: id, viewer: nil, connection, context.logger)
            var presenter = service.presenter(app: app, viewer: nil, urls: urls, connection, context.logger)
            return try await presenter.announcements([view])[0]
        }
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
        let urls = service.urls(request)
        let store = service.store
        return try await store.read(logger: context.logger) { connection in
            let (views, total) = try await store.announcements.announcements(
                app: app, user: user, fromID: paging.fromID, pageSize: paging.pageSize, connection, context.logger)
            var presenter = service.presenter(app: app, viewer: user, urls: urls, connection, context.logger)
            return try Response.list(Page(items: try await presenter.announcements(views), total: total))
        }
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        let urls = service.urls(request)
        let store = service.store
        return try await store.read(logger: context.logger) { connection in
            let view = try await store.announcements.announcement(app: app, id: id, viewer: user, connection, context.logger)
            var presenter = service.presenter(app: app, viewer: user, urls: urls, connection, context.logger)
            return try Response.json(try await presenter.announcements([view])[0])
        }
    }

    @Sendable func delete(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        try await service.store.announcements.deleteAnnouncement(app: app, user: user, id: id, logger: context.logger)
        return Response(status: .noContent)
    }

    @Sendable func addReceipt(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let id = try context.parameters.layerID("announcement", as: .announcements).uuid
        let status = try await request.receiptStatus()
        try await service.store.announcements.addAnnouncementReceipt(app: app, user: user, id: id, status: status, logger: context.logger)
        return Response(status: .noContent)
    }
}
