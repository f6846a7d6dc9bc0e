import Foundation
import LayerModels
import LayerServer
import Logging

/// Turns rows into the API's objects as one viewer sees them (or, with no viewer, in the Server
/// API's system view), loading what they refer to in a few batched queries.
struct Presenter {
    let app: UUID
    /// The user whose view this is; nil for the system view.
    let viewer: String?
    let urls: URLBuilder
    let links: ContentLinks
    /// Nil when rendering only what the caller already holds (``newMessage(_:)``).
    let reads: PresenterReads?
    let logger: Logger

    private(set) var participants: [UUID: [ParticipantRecord]] = [:]
    private(set) var identities: [String: IdentityRecord] = [:]
    /// Percent-encoded user ids, made once per user rather than once per mention.
    private var encodedUsers: [String: String] = [:]

    init(app: UUID, viewer: String?, urls: URLBuilder, links: ContentLinks, reads: PresenterReads?, logger: Logger) {
        self.app = app
        self.viewer = viewer
        self.urls = urls
        self.links = links
        self.reads = reads
        self.logger = logger
    }

    /// The same presenter for another viewer, keeping what it has loaded.
    func viewing(as viewer: String?) -> Presenter {
        var copy = Presenter(app: app, viewer: viewer, urls: urls, links: links, reads: reads, logger: logger)
        copy.participants = participants
        copy.identities = identities
        copy.encodedUsers = encodedUsers
        return copy
    }

    /// The reads of a presenter that loads; one made without a connection never loads.
    var database: PresenterReads {
        guard let reads else { preconditionFailure("this presenter only renders what it was given") }
        return reads
    }

    // MARK: Loading

    mutating func loadParticipants(of conversations: some Sequence<UUID>) async throws {
        let missing = Set(conversations).subtracting(participants.keys)
        guard !missing.isEmpty else { return }
        let loaded = try await database.participants(app: app, of: Array(missing), logger: logger)
        for id in missing { participants[id] = loaded[id] ?? [] }
    }

    mutating func loadIdentities(_ users: some Sequence<String>) async throws {
        let missing = Array(Set(users).subtracting(identities.keys))
        guard !missing.isEmpty else { return }
        for identity in try await database.identities(app: app, users: missing, logger: logger) {
            identities[identity.userID] = identity
        }
        for user in missing where identities[user] == nil { identities[user] = IdentityRecord(userID: user) }
        for user in missing {
            encodedUsers[user] = user.addingPercentEncoding(withAllowedCharacters: .layerUnreserved) ?? user
        }
    }

    /// `layer:///identities/<encoded user id>`.
    func identityID(_ user: String) -> String {
        encodedUsers[user].map { "layer:///identities/" + $0 } ?? LayerID.identity(userID: user)
    }

    // MARK: Identities

    func basicIdentity(_ user: String) -> BasicIdentityObject {
        let record = identities[user] ?? IdentityRecord(userID: user)
        return BasicIdentityObject(
            id: identityID(user),
            url: urls.identity(encoded: encodedUsers[user] ?? URLBuilder.encoded(user)), userID: user,
            displayName: record.displayName, avatarURL: record.avatarURL, identityType: record.identityType)
    }

    func identity(_ record: IdentityRecord) -> IdentityObject {
        IdentityObject(basic: basicIdentity(record.userID), record: record)
    }

    /// The full identities of records the caller read itself, which need no loading.
    mutating func identities(_ records: [IdentityRecord]) -> [IdentityObject] {
        for record in records where identities[record.userID] == nil {
            identities[record.userID] = record
            encodedUsers[record.userID] = URLBuilder.encoded(record.userID)
        }
        return records.map(identity)
    }

    // MARK: Messages

    mutating func messages(_ records: [MessageRecord]) async throws -> [MessageObject] {
        guard !records.isEmpty else { return [] }
        try await loadParticipants(of: records.map(\.conversationID))
        let users = records.compactMap(\.senderID) + records.flatMap { participants[$0.conversationID]?.map(\.userID) ?? [] }
        try await loadIdentities(users)
        let receipts = try await receipts(of: records.map(\.id))
        return records.map { record in
            message(for: record, members: participants[record.conversationID] ?? [], receipts: receipts[record.id] ?? [:])
        }
    }

    /// A message just sent: every member has it as `sent`, the sender as `read`.
    func newMessage(_ sent: MessageRepository.SentMessage) -> MessageObject {
        var presenter = self
        for member in sent.members where presenter.identities[member] == nil {
            presenter.identities[member] = IdentityRecord(userID: member)
        }
        if let sender = sent.sender { presenter.identities[sender.userID] = sender }
        return presenter.message(
            for: sent.record, members: sent.members.map { ParticipantRecord(newMember: $0, of: sent.record.conversationID) },
            receipts: [:])
    }

    private func receipts(of messages: [UUID]) async throws -> [UUID: [String: Receipt]] {
        try await database.receipts(app: app, of: messages, logger: logger)
    }

    /// The status of `message` for `participant`: the sender has read it; otherwise the higher of
    /// the participant's receipt and the read/delivered marks that `mark_all_read` moves.
    static func status(
        of message: MessageRecord, for participant: ParticipantRecord, receipt: ReceiptStatus?
    ) -> ReceiptStatus {
        if message.senderID == participant.userID { return .read }
        var status = receipt ?? .sent
        if message.position <= participant.readPosition {
            status = .read
        } else if message.position <= participant.deliveredPosition {
            status = max(status, .delivered)
        }
        return status
    }

    private func message(
        for record: MessageRecord, members all: [ParticipantRecord], receipts: [String: Receipt]
    ) -> MessageObject {
        var everyone = all
        var receiptStatus = receipts.mapValues(\.status)
        // A removed participant sees the others as they were at the removal: who was in the
        // conversation, and how far each had received and read. Their own status goes on.
        if let own = all.first(where: { $0.userID == viewer }), let view = own.leftView, let leftAt = own.leftAt {
            everyone = [own] + view.members.map { ParticipantRecord(member: $0, of: record.conversationID) }
            receiptStatus = receipts.compactMapValues { $0.status(at: leftAt) }
            receiptStatus[own.userID] = receipts[own.userID]?.status
        }
        let members = everyone.filter { participant in
            participant.leftPosition.map { record.position <= $0 } ?? true
        }
        var recipientStatus = RecipientStatus()
        var viewerStatus: ReceiptStatus?
        // With the conversation's receipts switched off, a user sees only their own status; the
        // others' stay `sent` (the app's system view still sees them all).
        let othersHidden = viewer != nil && !(all.first?.receiptsEnabled ?? true)
        for participant in members {
            var status = Self.status(of: record, for: participant, receipt: receiptStatus[participant.userID])
            if participant.userID == viewer { viewerStatus = status } else if othersHidden { status = .sent }
            recipientStatus[participant.userID, identity: identityID(participant.userID)] = status.name
        }
        if let sender = record.senderID { recipientStatus[sender, identity: identityID(sender)] = ReceiptStatus.read.name }
        let sender: SenderObject =
            if let senderID = record.senderID { .identity(basicIdentity(senderID)) } else {
                .system(name: record.senderName ?? "")
            }
        let url = urls.message(record.id, in: record.conversationID, viewer: viewer)
        return MessageObject(
            id: LayerID(.messages, record.id).uri, url: url, receiptsURL: url + "/receipts", position: record.position,
            conversation: ConversationReference(
                id: LayerID(.conversations, record.conversationID).uri, url: urls.conversation(record.conversationID)),
            parts: record.parts.enumerated().map { part(for: $1, at: $0, of: record, url: url) }, sentAt: record.sentAt,
            receivedAt: receivedAt(record, members: all), updatedAt: record.updatedAt,
            sender: sender,
            isUnread: viewer.map { viewer in record.senderID != viewer && (viewerStatus ?? .read) < .read },
            recipientStatus: recipientStatus, notification: record.notification, offTheRecord: record.offTheRecord)
    }

    /// `received_at`, which only the Server API shows (the Client API never had it): when the
    /// message reached the viewer, which is when it was sent, or for one who joined later, when
    /// they joined; in the system view, when it reached the service.
    private func receivedAt(_ record: MessageRecord, members: [ParticipantRecord]) -> Date? {
        guard urls.serverAPIApp != nil else { return nil }
        guard let joined = members.first(where: { $0.userID == viewer })?.joinedAt else { return record.sentAt }
        return max(record.sentAt, joined)
    }

    func part(for part: StoredPart, at index: Int, of message: MessageRecord, url: String) -> PartObject {
        PartObject(
            messageID: LayerID(.messages, message.id).uri, messageURL: url, uuid: part.id, index: index,
            mimeType: part.mimeType, body: part.body, encoding: part.encoding,
            content: content(of: part, conversation: message.conversationID),
            // A part changed on its own has its own time; a message sent again, the message's.
            updatedAt: part.updatedAt ?? (message.parts.contains { $0.updatedAt != nil } ? nil : message.updatedAt))
    }

    /// The rich content of a part, with fresh links; nil for an inline part.
    func content(of part: StoredPart, conversation: UUID?) -> ContentObject? {
        guard let contentID = part.contentID else { return nil }
        let download = links.url(.download, content: contentID, urls: urls)
        return ContentObject(
            id: LayerID(.content, contentID).uri, size: part.size ?? 0, downloadURL: download.url,
            expiration: download.expiration, refreshURL: urls.refresh(content: contentID, conversation: conversation))
    }

    // MARK: Conversations

    mutating func conversations(_ records: [ConversationRecord]) async throws -> [ConversationObject] {
        guard !records.isEmpty else { return [] }
        try await loadParticipants(of: records.map(\.id))
        try await loadIdentities(records.flatMap { participants[$0.id]?.map(\.userID) ?? [] })
        var stats: [UUID: ViewerStats] = [:]
        var lastMessages: [UUID: MessageObject] = [:]
        if let viewer {
            stats = try await database.viewerStats(app: app, conversations: records.map(\.id), viewer: viewer, logger: logger)
            let last = try await database.messagesIncludingDeleted(
                app: app, ids: stats.values.compactMap(\.lastMessageID), logger: logger)
            for message in try await messages(last) {
                if let id = LayerID(parsing: message.id, as: .messages)?.uuid,
                    let record = last.first(where: { $0.id == id })
                {
                    lastMessages[record.conversationID] = message
                }
            }
        }
        return records.map { record in
            let members = participants[record.id] ?? []
            let own = members.first { $0.userID == viewer }
            // A former participant still sees the conversation, but no longer who is in it, and its
            // metadata as it was when they left.
            let visible = (own.map { !$0.isCurrent } ?? false) ? [] : members.filter(\.isCurrent)
            var object = ConversationObject(
                id: LayerID(.conversations, record.id).uri, url: urls.conversation(record.id),
                messagesURL: urls.messages(of: record.id), createdAt: record.createdAt,
                participants: visible.map { basicIdentity($0.userID) }, isDistinct: record.isDistinct,
                metadata: own?.leftView?.metadata ?? record.metadata, receiptsEnabled: record.receiptsEnabled)
            if viewer != nil {
                let stat = stats[record.id]
                object.viewer = .init(
                    lastMessage: lastMessages[record.id], unreadMessageCount: stat?.unread ?? 0,
                    totalMessageCount: stat?.total ?? 0, privateMetadata: own?.privateMetadata ?? [:])
            }
            return object
        }
    }
}
