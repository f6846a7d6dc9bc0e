import Foundation
import LayerModels
import LayerServer
import Logging

/// Messages of conversations: sending (at once, later, or a batch of them), reading them as one
/// user sees them or in the system view, receipts and deletion. Every send, whoever makes it —
/// a user's device, the app's backend, a delayed send coming due — ends in ``didSend(_:app:)``.
struct Messages: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    /// Who messaged whom, for the name resolution service's graph.
    private let relationships: RelationshipReporter
    private let conversations: Conversations
    private let channels: Channels
    private let content: RichContent
    private let tags: RequestTags
    /// Wakes this replica's sender of delayed messages when one is scheduled here.
    private let schedules: Alarm

    init(
        repositories: SyncRepositories, views: Views, relationships: RelationshipReporter, conversations: Conversations,
        channels: Channels, content: RichContent, schedules: Alarm
    ) {
        self.repositories = repositories
        self.views = views
        self.relationships = relationships
        self.conversations = conversations
        self.channels = channels
        self.content = content
        self.schedules = schedules
        tags = RequestTags(repository: repositories.requestTags)
    }

    // MARK: Reading

    /// A message as the scope's viewer sees it (the app: the system view); 404 if they may not.
    func message(_ id: UUID, _ scope: Scope) async throws -> MessageObject {
        try await repositories.read(logger: scope.logger) { connection in
            let (record, _) = try await repositories.messages.visibleMessage(
                app: scope.app, id: id, caller: scope.caller, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            return try await presenter.messages([record])[0]
        }
    }

    /// The app's messages of `ids` as it reads them, by id, in one go (a webhook's batch); deleted
    /// ones are left out. For the app's scope only.
    func messages(_ ids: [UUID], _ scope: Scope) async throws -> [UUID: MessageObject] {
        precondition(scope.caller == .app, "every message of the app is the app's to read")
        return try await repositories.read(logger: scope.logger) { connection in
            let records = try await connection.messages(app: scope.app, ids: ids, logger: scope.logger)
            var presenter = views.presenter(scope, connection)
            let objects = try await presenter.messages(records)
            return Dictionary(zip(records.map(\.id), objects)) { first, _ in first }
        }
    }

    /// A message of `conversation`; 404 when it is a message of another.
    func message(_ id: UUID, in conversation: UUID, _ scope: Scope) async throws -> MessageObject {
        let message = try await message(id, scope)
        guard message.conversation?.id == LayerID(.conversations, conversation).uri else {
            throw APIError.notFound("The message")
        }
        return message
    }

    /// A page of a conversation's messages as the scope's viewer sees them (the app: all of
    /// them), newest first.
    func list(in conversation: UUID, paging: Paging, _ scope: Scope) async throws -> Page<MessageObject> {
        try await repositories.read(logger: scope.logger) { connection in
            _ = try await repositories.conversations.access(
                app: scope.app, conversation: conversation, caller: scope.caller, forWriting: false, connection, scope.logger)
            let (records, total) = try await repositories.messages.messages(
                app: scope.app, conversation: conversation, viewer: scope.viewer, fromID: paging.fromID,
                pageSize: paging.pageSize, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.messages(records), total: total)
        }
    }

    /// A page of the messages the scope's user sees whose text holds the words, newest first.
    func search(_ search: MessageSearch, paging: Paging, _ scope: Scope) async throws -> Page<MessageObject> {
        guard let viewer = scope.viewer else { preconditionFailure("a search is made as a user") }
        return try await repositories.read(logger: scope.logger) { connection in
            let (records, total) = try await repositories.messages.search(
                app: scope.app, viewer: viewer, search, fromID: paging.fromID, pageSize: paging.pageSize, connection,
                scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.messages(records), total: total)
        }
    }

    // MARK: Sending

    /// What a send of the Server API came to: the message, or a delayed send still waiting.
    enum Sent: Sendable {
        case now(MessageObject)
        case later(ScheduledMessageObject)
    }

    /// Sends a message into `conversation` as `sender` and answers it as the scope's viewer sees
    /// it; 409 `id_in_use` with the earlier message of a repeated id. The Client API, the
    /// WebSocket's `Message.create` and the Server API all send here.
    ///
    /// The Server API may also give a request `tag`, a `schedule` in the body (a delayed send:
    /// ``Sent/later(_:)``) and refer to content it opened for the conversation. With
    /// `senderProperty` (the body named the sender), a sending user who is not a current
    /// participant is a 422 naming it; without it they get what the Client API answers them.
    func send(
        _ body: MessageInput, to conversation: UUID, as sender: MessageRepository.Sender, tag: UUID? = nil,
        senderProperty: String? = nil, _ scope: Scope
    ) async throws -> Sent {
        var body = body
        let schedule = try SendSchedule.parse(body.schedule)
        var reserved: UUID?
        if let tag {
            let id = try await tags.reserve(tag, collection: .messages, scope)
            if let earlier = try await repeated(id, scope) { return earlier }
            reserved = id
            body.id = id.lowercased
        }
        if let senderProperty, let user = sender.userID {
            try await requireParticipant(user, of: conversation, property: senderProperty, scope)
        }
        guard let schedule else {
            do {
                return .now(try await sendNow(body, to: conversation, as: sender, scope))
            } catch let error as APIError where error.body.id == ErrorID.idInUse.rawValue && reserved != nil {
                // A concurrent request with the same tag sent it under the reserved id first.
                guard let earlier = try await repeated(reserved!, scope) else { throw error }
                return earlier
            }
        }
        try await requireSender(sender, of: conversation, scope)
        let id = reserved ?? UUID()
        let outgoing = try await content.prepare(body, id: id, sender: sender, appContentOf: conversation, scope)
        let new = ScheduledMessageRepository.NewScheduledMessage(
            app: scope.app, id: id, conversation: conversation, sender: sender, parts: outgoing.parts,
            notification: outgoing.notification, schedule: schedule)
        guard let record = try await repositories.scheduled.schedule(new, logger: scope.logger) else {
            // A concurrent request with the same tag scheduled it, and it has gone out since.
            guard let earlier = try await repeated(id, scope) else { throw APIError.notFound("The conversation") }
            return earlier
        }
        schedules.ring()
        return .later(ScheduledMessageObject(record, urls: scope.urls))
    }

    /// Sends a message at once; its answer is rendered from what the write returned (a new
    /// message has no receipts yet).
    private func sendNow(
        _ body: MessageInput, to conversation: UUID, as sender: MessageRepository.Sender, _ scope: Scope
    ) async throws -> MessageObject {
        let id = try LayerID.clientChosen(body.id, as: .messages) ?? UUID()
        // The app's backend may refer to content it opened for this conversation.
        let outgoing = try await content.prepare(
            body, id: id, sender: sender, appContentOf: scope.isBackend ? conversation : nil, scope)
        let outcome = try await repositories.messages.send(
            app: scope.app, conversation: conversation, sender: sender, id: id, parts: outgoing.parts,
            notification: outgoing.notification, logger: scope.logger)
        switch outcome {
        case .sent(let sent):
            didSend([sent], app: scope.app)
            return views.renderer(scope).newMessage(sent)
        case .idInUse(let id):
            let existing = try? await message(id, scope)
            throw APIError(.idInUse, "The requested message already exists.", data: try existing.map(jsonValue))
        }
    }

    /// The answer to a repeated request tag: the message it sent, or its delayed send still
    /// waiting; nil if neither is there (the first request failed, or its delayed send was dropped).
    private func repeated(_ id: UUID, _ scope: Scope) async throws -> Sent? {
        if try await tags.exists(LayerID(.messages, id), scope) { return .now(try await message(id, scope)) }
        if let record = try await repositories.scheduled.scheduled(app: scope.app, id: id, logger: scope.logger) {
            return .later(ScheduledMessageObject(record, urls: scope.urls))
        }
        return nil
    }

    /// What follows every message sent, once it is stored: the relationship report.
    func didSend(_ sent: [MessageRepository.SentMessage], app: UUID) {
        for message in sent {
            if let user = message.record.senderID {
                relationships.report(app: app, from: user, to: message.members, kind: .message)
            }
        }
    }

    // MARK: Batches

    /// One message of a batch as the request gave it, with its sender and the property naming it.
    struct BatchInput: Sendable {
        var body: MessageInput
        var sender: MessageRepository.Sender
        var senderProperty: String
    }

    /// Sends `inputs` into `conversation`, all or none, and answers them in the system view, in
    /// order. Each is checked as a single send would be, and a bad one fails the whole batch with
    /// its error put under its index (`3.parts.0.body`). A request `tag` covers the batch as a
    /// whole: a repeat answers the messages the first request sent.
    func sendBatch(_ inputs: [BatchInput], to conversation: UUID, tag: UUID?, _ scope: Scope) async throws -> [MessageObject] {
        var ids = inputs.map { _ in UUID() }
        if let tag {
            let first = try await tags.reserve(tag, collection: .messages, scope)
            ids = inputs.indices.map { Self.batchMessageID(first, index: $0) }
            if try await tags.exists(LayerID(.messages, first), scope) {
                return try await sentBefore(ids, in: conversation, scope)
            }
        }
        let members = try await conversations.requireExisting(conversation, scope)
        var messages: [MessageRepository.BatchMessage] = []
        for (index, (input, id)) in zip(inputs, ids).enumerated() {
            do {
                if let user = input.sender.userID, !members.contains(where: { $0.userID == user && $0.isCurrent }) {
                    throw APIError.invalid(input.senderProperty, "'\(user)' is not a participant of this conversation.")
                }
                let outgoing = try await content.prepare(
                    input.body, id: id, sender: input.sender, appContentOf: conversation, scope)
                messages.append(.init(id: id, sender: input.sender, parts: outgoing.parts, notification: outgoing.notification))
            } catch let error as APIError {
                throw error.under(String(index))
            }
        }
        guard
            let sent = try await repositories.messages.sendBatch(
                app: scope.app, conversation: conversation, messages, logger: scope.logger)
        else {
            // A concurrent request with the same tag sent the batch first.
            guard tag != nil else { throw APIError(.idInUse, "The requested message ids are already in use.") }
            return try await sentBefore(ids, in: conversation, scope)
        }
        didSend(sent, app: scope.app)
        return try await batchMessages(sent.map(\.record.id), scope)
    }

    /// The answer to a repeated batch: the messages the first request sent, as they are now.
    private func sentBefore(_ ids: [UUID], in conversation: UUID, _ scope: Scope) async throws -> [MessageObject] {
        try await conversations.requireExisting(conversation, scope)
        let messages = try await batchMessages(ids, scope)
        return messages.filter { $0.conversation?.id == LayerID(.conversations, conversation).uri }
    }

    /// Those of the messages `ids` that exist, in the system view, in the order of `ids`.
    private func batchMessages(_ ids: [UUID], _ scope: Scope) async throws -> [MessageObject] {
        try await repositories.read(logger: scope.logger) { connection in
            let found = try await connection.messagesIncludingDeleted(app: scope.app, ids: ids, logger: scope.logger).filter {
                $0.deletedAt == nil
            }
            let records = ids.compactMap { id in found.first { $0.id == id } }
            var presenter = views.presenter(scope.appWide, connection)
            return try await presenter.messages(records)
        }
    }

    /// The id of message `index` of a batch whose first message has the id `first` (the one a
    /// request tag reserved): the others follow from it, so a repeat finds them all.
    static func batchMessageID(_ first: UUID, index: Int) -> UUID {
        guard index > 0 else { return first }
        return UUID(derivedFrom: "\(first.lowercased)/\(index)")
    }

    // MARK: Who may send

    /// Fails as a send by `sender` into `conversation` would now: 404 if the conversation is gone
    /// or a sending user was never in it, 403 if they left. A system sender needs no participation.
    private func requireSender(_ sender: MessageRepository.Sender, of conversation: UUID, _ scope: Scope) async throws {
        let members = try await conversations.requireExisting(conversation, scope)
        guard let user = sender.userID else { return }
        guard let own = members.first(where: { $0.userID == user }) else { throw APIError.notFound("The conversation") }
        guard own.isCurrent else {
            throw APIError(.accessDenied, "'\(user)' is no longer a participant of this conversation.")
        }
    }

    /// Fails with 422 naming `property` unless `user` is a current participant of `conversation`.
    private func requireParticipant(_ user: String, of conversation: UUID, property: String, _ scope: Scope) async throws {
        let members = try await conversations.requireExisting(conversation, scope)
        guard members.contains(where: { $0.userID == user && $0.isCurrent }) else {
            throw APIError.invalid(property, "'\(user)' is not a participant of this conversation.")
        }
    }

    // MARK: Receipts and deletion

    func addReceipt(_ id: UUID, status: ReceiptStatus, _ scope: Scope) async throws {
        try await repositories.write(logger: scope.logger) { connection in
            try await repositories.messages.addReceipt(
                app: scope.app, user: scope.user, message: id, status: status, connection, scope.logger)
        }
    }

    /// Deletes a message: the one door of every deletion of a message. A conversation's message
    /// is deleted for every participant (`all_participants`, only its sender among users) or from
    /// the user's devices (`my_devices`); the app always deletes for everybody, and with
    /// `conversation` (its path named one) only a message of that conversation. A channel's
    /// message is deleted for all its members (`mode` none or `all_participants`).
    func delete(
        _ id: UUID, in conversation: UUID? = nil, mode: ConversationRepository.DeletionMode?, _ scope: Scope
    ) async throws {
        if conversation == nil, try await channels.isChannelMessage(id, scope) {
            guard mode == nil || mode == .allParticipants else {
                throw APIError.invalid("mode", "A channel message is deleted for all its members: mode=all_participants or none.")
            }
            try await channels.deleteMessage(id, scope)
            return
        }
        if let conversation {
            let record = try await repositories.read(logger: scope.logger) { connection in
                try await repositories.messages.visibleMessage(
                    app: scope.app, id: id, caller: scope.caller, connection, scope.logger
                ).0
            }
            guard record.conversationID == conversation else { throw APIError.notFound("The message") }
        }
        guard let mode = scope.caller == .app ? .allParticipants : mode else {
            throw APIError(.missingProperty, "A deletion needs mode=all_participants or mode=my_devices.", property: "mode")
        }
        try await repositories.messages.deleteMessage(
            app: scope.app, caller: scope.caller, id: id, mode: mode, logger: scope.logger)
    }
}

/// Updatable message parts (API 3.0, the Server API's `…/messages/<m>/parts` routes).
extension Messages {
    /// What a request asks to do to the parts of a message, as sent, with the id of the part it
    /// adds or replaces.
    enum PartsRequest: Sendable {
        case add(UUID, PartInput)
        case replace(UUID, PartInput)
        case replaceAll([PartInput]?)
        case delete(UUID)
    }

    /// Changes the parts of message `id` of `conversation` as the app, checked as a send checks
    /// its parts (content the app opened for the conversation may be used); the message after.
    func changeParts(_ request: PartsRequest, of id: UUID, in conversation: UUID, _ scope: Scope) async throws
        -> MessageObject
    {
        func resolved(_ parts: [StoredPart]) async throws -> [StoredPart] {
            try await content.resolve(
                ValidatedParts(parts: parts), owner: nil, appContentOf: conversation, scope
            ).parts
        }
        let change: MessageRepository.PartChange
        var parts: [StoredPart] = []
        switch request {
        case .add(let partID, let input):
            parts = try await resolved([try PartRules.validate(input, id: partID, field: "")])
            change = .add(parts[0])
        case .replace(let partID, let input):
            if let given = input.id, try PartRules.partID(given, messageID: id, property: "id") != partID {
                throw APIError.invalid("id", "A part keeps its id; this one is \(partID.lowercased).")
            }
            parts = try await resolved([try PartRules.validate(input, id: partID, field: "")])
            change = .replace(partID, parts[0])
        case .replaceAll(let inputs):
            parts = try await resolved(try PartRules.validate(inputs, messageID: id).parts)
            change = .replaceAll(parts)
        case .delete(let partID):
            change = .delete(partID)
        }
        let record = try await repositories.messages.changeParts(
            app: scope.app, conversation: conversation, message: id, change, contentIDs: parts.compactMap(\.contentID),
            logger: scope.logger)
        return try await repositories.read(logger: scope.logger) { connection in
            var presenter = views.presenter(scope, connection)
            return try await presenter.messages([record])[0]
        }
    }
}
