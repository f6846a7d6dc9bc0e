import Foundation
import LayerModels
import LayerServer
import Logging

/// Channels: created by users, seen by anyone in the app, with members who join and leave (or
/// whom the app adds and removes), and messages for all their members.
struct Channels: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let content: RichContent

    init(repositories: SyncRepositories, views: Views, content: RichContent) {
        self.repositories = repositories
        self.views = views
        self.content = content
    }

    struct NewChannelInput: Decodable, Sendable {
        var id: String?
        var name: String?
        var members: [JSONValue]?
        var metadata: JSONValue?
        static let keys: Set<String> = ["id", "name", "members", "metadata"]
    }

    /// Creates a channel (`POST /channels`, WebSocket `Channel.create`). A name the app already
    /// uses is 409 `conflict` with that channel; a client-chosen id used before, 409 `id_in_use`.
    func create(_ input: NewChannelInput, _ scope: Scope) async throws -> ChannelObject {
        guard let rawName = input.name else { throw APIError(.missingProperty, "A channel needs a name.", property: "name") }
        let name = try validateName(rawName, property: "name")
        guard UUID(uuidString: name) == nil else { throw APIError.invalid("name", "A channel's name is not a UUID.") }
        let new = try ChannelRepository.NewChannel(
            id: LayerID.clientChosen(input.id, as: .channels), name: name,
            members: (input.members ?? []).enumerated().map { try userID(named: $1, property: "members.\($0)") },
            metadata: input.metadata)
        switch try await repositories.channels.createChannel(app: scope.app, caller: scope.caller, new, logger: scope.logger) {
        case .created(let id):
            return try await channel(id, scope)
        case .conflict(let id):
            throw APIError(.conflict, "A channel named '\(name)' exists already.", data: try await jsonValue(channel(id, scope)))
        case .idInUse(let id):
            let existing = try? await channel(id, scope)
            throw APIError(.idInUse, "The requested channel id is already in use.", data: try existing.map(jsonValue))
        }
    }

    /// A channel as the scope's viewer sees it (with their membership, if any; the app: the
    /// system view). Anyone in the app may see a channel; other apps get 404.
    func channel(_ id: UUID, _ scope: Scope) async throws -> ChannelObject {
        try await repositories.read(logger: scope.logger) { connection in
            let (record, membership) = try await repositories.channels.access(
                app: scope.app, channel: id, caller: scope.caller, membersOnly: false, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            try await presenter.loadIdentities(scope.viewer.map { [$0] } ?? [])
            return presenter.channel(record, membership: membership)
        }
    }

    /// A page of channels, newest first: the scope's user's, or for the app every channel.
    func list(paging: Paging, _ scope: Scope) async throws -> Page<ChannelObject> {
        try await repositories.read(logger: scope.logger) { connection in
            let (records, total) = try await repositories.channels.channels(
                app: scope.app, member: scope.viewer, fromID: paging.fromID, pageSize: paging.pageSize, connection,
                scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.channels(records), total: total)
        }
    }

    func patch(_ id: UUID, operations: [LayerPatchOperation], _ scope: Scope) async throws {
        try await repositories.channels.patchChannel(
            app: scope.app, caller: scope.caller, id: id, operations: operations, logger: scope.logger)
    }

    func delete(_ id: UUID, _ scope: Scope) async throws {
        try await repositories.channels.deleteChannel(app: scope.app, caller: scope.caller, id: id, logger: scope.logger)
    }

    // MARK: Members

    /// A page of a channel's members, in the order they joined; members (and the app) only.
    func members(of channel: UUID, paging: MemberPaging, _ scope: Scope) async throws -> Page<MembershipObject> {
        try await repositories.read(logger: scope.logger) { connection in
            let (record, _) = try await repositories.channels.access(
                app: scope.app, channel: channel, caller: scope.caller, membersOnly: true, connection, scope.logger)
            let (members, total) = try await repositories.channels.members(
                channel: channel, fromUser: paging.fromUser, pageSize: paging.pageSize, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.memberships(members, of: record), total: total)
        }
    }

    /// One membership: anyone may ask about their own; about others, members (and the app) only.
    /// 404 when `user` is not a member.
    func member(_ user: String, of channel: UUID, _ scope: Scope) async throws -> MembershipObject {
        try await repositories.read(logger: scope.logger) { connection in
            let (record, _) = try await repositories.channels.access(
                app: scope.app, channel: channel, caller: scope.caller, membersOnly: scope.viewer != user, connection,
                scope.logger)
            guard let membership = try await connection.memberships(of: [channel], users: [user], logger: scope.logger).first
            else {
                throw APIError.notFound("The membership of '\(user)'")
            }
            var presenter = views.presenter(scope, connection)
            return try await presenter.memberships([membership], of: record)[0]
        }
    }

    /// `user` joins the channel (themselves), or the app adds them.
    func addMember(_ user: String, to channel: UUID, _ scope: Scope) async throws {
        try await repositories.channels.addMember(
            app: scope.app, caller: scope.caller, channel: channel, user: user, logger: scope.logger)
    }

    /// `user` leaves the channel (themselves), or the app removes them.
    func removeMember(_ user: String, from channel: UUID, _ scope: Scope) async throws {
        try await repositories.channels.removeMember(
            app: scope.app, caller: scope.caller, channel: channel, user: user, logger: scope.logger)
    }

    // MARK: Messages

    /// Sends a message to a channel (`POST /channels/<id>/messages`, WebSocket `Message.create`
    /// with the channel as `object_id`); 409 `id_in_use` with the earlier message of a repeated id.
    func send(_ body: MessageInput, to channel: UUID, as sender: MessageRepository.Sender, _ scope: Scope) async throws
        -> ChannelMessageObject
    {
        let id = try LayerID.clientChosen(body.id, as: .messages) ?? UUID()
        let outgoing = try await content.prepare(body, id: id, sender: sender, appContentOf: nil, scope)
        switch try await repositories.channels.send(
            app: scope.app, channel: channel, sender: sender, id: id, parts: outgoing.parts,
            notification: outgoing.notification, logger: scope.logger)
        {
        case .sent(let sent):
            return try await repositories.read(logger: scope.logger) { connection in
                var presenter = views.presenter(scope, connection)
                return try await presenter.channelMessages([sent.record])[0]
            }
        case .idInUse(let id):
            let existing = try? await message(id, scope)
            throw APIError(.idInUse, "The requested message already exists.", data: try existing.map(jsonValue))
        }
    }

    /// A page of a channel's messages, newest first; members (and the app) only.
    func messages(in channel: UUID, paging: Paging, _ scope: Scope) async throws -> Page<ChannelMessageObject> {
        try await repositories.read(logger: scope.logger) { connection in
            _ = try await repositories.channels.access(
                app: scope.app, channel: channel, caller: scope.caller, membersOnly: true, connection, scope.logger)
            let (records, total) = try await repositories.channels.messages(
                channel: channel, viewer: scope.viewer, fromID: paging.fromID, pageSize: paging.pageSize, connection,
                scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.channelMessages(records), total: total)
        }
    }

    /// A channel message the scope's caller may see; nil when `id` is no such message.
    func message(_ id: UUID, _ scope: Scope) async throws -> ChannelMessageObject? {
        try await repositories.read(logger: scope.logger) { connection in
            guard
                let record = try await repositories.channels.visibleMessage(
                    app: scope.app, id: id, caller: scope.caller, connection, scope.logger)
            else { return nil }
            var presenter = views.presenter(scope, connection)
            return try await presenter.channelMessages([record])[0]
        }
    }

    /// A message of `channel`; 404 when it is no message of it.
    func message(_ id: UUID, in channel: UUID, _ scope: Scope) async throws -> ChannelMessageObject {
        guard let message = try await message(id, scope), message.channel.id == LayerID(.channels, channel).uri else {
            throw APIError.notFound("The message")
        }
        return message
    }

    func isChannelMessage(_ id: UUID, _ scope: Scope) async throws -> Bool {
        try await repositories.channels.isChannelMessage(app: scope.app, id: id, logger: scope.logger)
    }

    /// Deletes a channel message for all its members: its sender, or the app (moderation); with
    /// `channel`, only a message of that channel. (``Messages/delete(_:in:mode:_:)`` is the door of
    /// a message named on its own.)
    func deleteMessage(_ id: UUID, in channel: UUID? = nil, _ scope: Scope) async throws {
        if let channel { _ = try await message(id, in: channel, scope) }
        try await repositories.channels.deleteMessage(app: scope.app, caller: scope.caller, id: id, logger: scope.logger)
    }
}
