import Foundation
import LayerModels
import LayerServer
import Logging

extension Presenter {
    /// The operations of `entries`, each as its own user sees it. Messages are rendered once and
    /// given each viewer's `is_unread`; conversations are rendered per viewer.
    func operations(_ entries: [ChangeEntry]) async throws -> [OperationObject] {
        let channelChanges = try await channelOperations(entries)
        var system = viewing(as: nil)
        let messageIDs = Set(entries.filter { $0.type == .newMessage }.compactMap(\.message))
        let messageRecords = try await system.database.messagesIncludingDeleted(app: app, ids: Array(messageIDs), logger: logger)
        var messages: [UUID: (record: MessageRecord, object: MessageObject)] = [:]
        for (record, object) in zip(messageRecords, try await system.messages(messageRecords)) {
            messages[record.id] = (record, object)
        }
        // A removed participant sees the message as the conversation was when they left it.
        var formerViews: [String: [UUID: MessageObject]] = [:]
        for entry in entries where entry.type == .newMessage {
            guard let id = entry.message, let record = messages[id]?.record,
                system.participants[record.conversationID]?.contains(where: { $0.userID == entry.user && $0.leftView != nil })
                    == true, formerViews[entry.user]?[id] == nil
            else { continue }
            var viewer = system.viewing(as: entry.user)
            formerViews[entry.user, default: [:]][id] = try await viewer.messages([record]).first
        }
        var conversations: [String: [UUID: ConversationObject]] = [:]
        let needsConversation = entries.filter { [.newConversation, .updateConversation].contains($0.type) }
        let conversationIDs = Set(needsConversation.compactMap(\.conversation))
        if !conversationIDs.isEmpty {
            let records = try await system.database.conversationsIncludingDeleted(
                app: system.app, ids: Array(conversationIDs), logger: logger)
            for (user, userEntries) in Dictionary(grouping: needsConversation, by: \.user) {
                let wanted = Set(userEntries.compactMap(\.conversation))
                let mine = records.filter { wanted.contains($0.id) }
                var viewer = system.viewing(as: user)
                for (record, object) in zip(mine, try await viewer.conversations(mine)) {
                    conversations[user, default: [:]][record.id] = object
                }
            }
        }
        // What an update changed goes to push only; /sync gives the whole conversation.
        let changes = entries.map { $0.type == .updateConversation ? ConversationChanges(data: $0.data) : nil }
        try await system.loadIdentities(changes.flatMap { $0?.added ?? [] })
        return zip(entries, changes).map { entry, changes in
            if let operation = channelChanges[ChangeKey(user: entry.user, seq: entry.seq)] { return operation }
            var data = entry.data
            data[ConversationChanges.dataKey] = nil
            if let user = data["user_id"]?.stringValue { data["identity_id"] = .string(LayerID.identity(userID: user)) }
            var message: MessageObject?
            if entry.type == .newMessage, let id = entry.message, let (record, object) = messages[id] {
                message = object
                let status = object.recipientStatus.status(of: entry.user) ?? ReceiptStatus.read.name
                message?.isUnread = record.senderID != entry.user && status != ReceiptStatus.read.name
                if let former = formerViews[entry.user]?[id] { message = former }
            }
            return OperationObject(
                seq: entry.seq, type: entry.type, conversationID: entry.conversation, messageID: entry.message,
                message: message, conversation: entry.conversation.flatMap { conversations[entry.user]?[$0] },
                data: data,
                changes: changes.map { ConversationPatch(changes: $0, added: $0.added.map(system.basicIdentity)) })
        }
    }
}
