import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// What the sync service does with channels, whatever carries the request: the Client API, the
/// WebSocket (`Channel.create`, `Message.create` to a channel) and the Server API call these.
extension Messaging {
    struct CreateChannelBody: Decodable, Sendable {
        var id: String?
        var name: String?
        var members: [JSONValue]?
        var metadata: JSONValue?
        static let keys: Set<String> = ["id", "name", "members", "metadata"]
    }

    /// Creates a channel (`POST /channels`, WebSocket `Channel.create`). A name the app already
    /// uses is 409 `conflict` with that channel; a client-chosen id used before, 409 `id_in_use`.
    func createChannel(
        _ body: CreateChannelBody, app: UUID, caller: Caller, urls: URLBuilder, logger: Logger
    ) async throws -> ChannelObject {
        guard let rawName = body.name else { throw APIError(.missingProperty, "A channel needs a name.", property: "name") }
        let name = try validateName(rawName, property: "name")
        guard UUID(uuidString: name) == nil else { throw APIError.invalid("name", "A channel's name is not a UUID.") }
        let new = try ChannelRepository.NewChannel(
            id: LayerID.clientChosen(body.id, as: .channels), name: name,
            members: (body.members ?? []).enumerated().map { try userID(named: $1, property: "members.\($0)") },
            metadata: body.metadata)
        func object(_ id: UUID) async throws -> ChannelObject {
            try await channel(app: app, id: id, viewer: caller.userID, urls: urls, logger: logger)
        }
        switch try await repositories.channels.createChannel(app: app, caller: caller, new, logger: logger) {
        case .created(let id):
            return try await object(id)
        case .conflict(let id):
            throw APIError(.conflict, "A channel named '\(name)' exists already.", data: try await jsonValue(object(id)))
        case .idInUse(let id):
            let existing = try? await object(id)
            throw APIError(.idInUse, "The requested channel id is already in use.", data: try existing.map(jsonValue))
        }
    }

    /// A channel as `viewer` sees it (with their membership, if any; nil: the system view).
    /// Anyone in the app may see a channel; other apps get 404.
    func channel(app: UUID, id: UUID, viewer: String?, urls: URLBuilder, logger: Logger) async throws -> ChannelObject {
        try await repositories.read(logger: logger) { connection in
            let (record, membership) = try await repositories.channels.access(
                app: app, channel: id, caller: viewer.map(Caller.user) ?? .app, membersOnly: false, connection, logger)
            var presenter = presenter(app: app, viewer: viewer, urls: urls, connection, logger)
            try await presenter.loadIdentities(viewer.map { [$0] } ?? [])
            return presenter.channel(record, membership: membership)
        }
    }

    /// A page of channels, newest first: those of `member`, or with none every channel of the app.
    func channels(
        app: UUID, member: String?, paging: Paging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<ChannelObject> {
        try await repositories.read(logger: logger) { connection in
            let (records, total) = try await repositories.channels.channels(
                app: app, member: member, fromID: paging.fromID, pageSize: paging.pageSize, connection, logger)
            var presenter = presenter(app: app, viewer: member, urls: urls, connection, logger)
            return Page(items: try await presenter.channels(records), total: total)
        }
    }

    /// A page of a channel's members, in the order they joined; members (and the app) only.
    func channelMembers(
        app: UUID, channel: UUID, caller: Caller, paging: MemberPaging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<MembershipObject> {
        try await repositories.read(logger: logger) { connection in
            let (record, _) = try await repositories.channels.access(
                app: app, channel: channel, caller: caller, membersOnly: true, connection, logger)
            let (members, total) = try await repositories.channels.members(
                channel: channel, fromUser: paging.fromUser, pageSize: paging.pageSize, connection, logger)
            var presenter = presenter(app: app, viewer: caller.userID, urls: urls, connection, logger)
            return Page(items: try await presenter.memberships(members, of: record), total: total)
        }
    }

    /// One membership: anyone may ask about their own; about others, members (and the app) only.
    /// 404 when `user` is not a member.
    func channelMember(
        app: UUID, channel: UUID, user: String, caller: Caller, urls: URLBuilder, logger: Logger
    ) async throws -> MembershipObject {
        try await repositories.read(logger: logger) { connection in
            let (record, _) = try await repositories.channels.access(
                app: app, channel: channel, caller: caller, membersOnly: caller.userID != user, connection, logger)
            guard let membership = try await connection.memberships(of: [channel], users: [user], logger: logger).first else {
                throw APIError.notFound("The membership of '\(user)'")
            }
            var presenter = presenter(app: app, viewer: caller.userID, urls: urls, connection, logger)
            return try await presenter.memberships([membership], of: record)[0]
        }
    }

    /// Sends a message to a channel (`POST /channels/<id>/messages`, WebSocket `Message.create`
    /// with the channel as `object_id`); 409 `id_in_use` with the earlier message of a repeated id.
    func sendChannelMessage(
        _ body: MessageInput, app: UUID, channel: UUID, sender: MessageRepository.Sender, urls: URLBuilder, logger: Logger
    ) async throws -> ChannelMessageObject {
        let id = try LayerID.clientChosen(body.id, as: .messages) ?? UUID()
        let (parts, notification) = try await checkedSend(
            body, id: id, app: app, sender: sender, appContentOf: nil, logger: logger)
        let caller = sender.userID.map(Caller.user) ?? .app
        switch try await repositories.channels.send(
            app: app, channel: channel, sender: sender, id: id, parts: parts, notification: notification, logger: logger)
        {
        case .sent(let sent):
            return try await repositories.read(logger: logger) { connection in
                var presenter = presenter(app: app, viewer: caller.userID, urls: urls, connection, logger)
                return try await presenter.channelMessages([sent.record])[0]
            }
        case .idInUse(let id):
            let existing = try? await channelMessage(app: app, id: id, caller: caller, urls: urls, logger: logger)
            throw APIError(.idInUse, "The requested message already exists.", data: try existing.map(jsonValue))
        }
    }

    /// A page of a channel's messages, newest first; members (and the app) only.
    func channelMessages(
        app: UUID, channel: UUID, caller: Caller, paging: Paging, urls: URLBuilder, logger: Logger
    ) async throws -> Page<ChannelMessageObject> {
        try await repositories.read(logger: logger) { connection in
            _ = try await repositories.channels.access(
                app: app, channel: channel, caller: caller, membersOnly: true, connection, logger)
            let (records, total) = try await repositories.channels.messages(
                channel: channel, viewer: caller.userID, fromID: paging.fromID, pageSize: paging.pageSize, connection, logger)
            var presenter = presenter(app: app, viewer: caller.userID, urls: urls, connection, logger)
            return Page(items: try await presenter.channelMessages(records), total: total)
        }
    }

    /// A channel message `caller` may see; nil when `id` is no such message.
    func channelMessage(
        app: UUID, id: UUID, caller: Caller, urls: URLBuilder, logger: Logger
    ) async throws -> ChannelMessageObject? {
        try await repositories.read(logger: logger) { connection in
            guard
                let record = try await repositories.channels.visibleMessage(app: app, id: id, caller: caller, connection, logger)
            else { return nil }
            var presenter = presenter(app: app, viewer: caller.userID, urls: urls, connection, logger)
            return try await presenter.channelMessages([record])[0]
        }
    }
}

/// Paging of a channel's members: `page_size` (1…500, the most the Web XDK asks for) and
/// `from_id`, the last membership of the previous page (`layer:///channels/<id>/members/<user>`,
/// an identity id or a bare user id).
struct MemberPaging: Sendable {
    static let maxPageSize = 500
    var pageSize = MemberPaging.maxPageSize
    var fromUser: String?

    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        if let text = query["page_size"] {
            guard let size = Int(String(text)), (1...Self.maxPageSize).contains(size) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to \(Self.maxPageSize).")
            }
            pageSize = size
        }
        if let text = query["from_id"] {
            let raw = String(text).removingPercentEncoding ?? String(text)
            if raw.hasPrefix("layer:///channels/"), let range = raw.range(of: "/members/") {
                let user = String(raw[range.upperBound...])
                fromUser = user.removingPercentEncoding ?? user
            } else {
                fromUser = try userID(fromText: raw, property: "from_id")
            }
        }
    }
}
