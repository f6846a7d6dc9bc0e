import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

extension MessageRepository {
    /// Applies one device operation inside the caller's transaction. A message id that exists is
    /// the last write of that message (its parts are replaced); statuses only go up; tags merge.
    func apply(
        _ operation: ClientOperation, app: UUID, user: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        switch operation.kind {
        case .newMessage(let new):
            if let existing = try await connection.message(app: app, id: new.id, logger: logger) {
                guard existing.conversationID == new.conversation else {
                    throw APIError.invalid("conversation_id", "The message exists in another conversation.")
                }
                try await replaceParts(
                    app: app, message: existing, sender: user, parts: new.parts, notification: new.notification, connection,
                    logger)
            } else {
                if try await connection.messageIDTaken(new.id, logger: logger) {
                    throw APIError(.idInUse, "The message id is already in use.", property: "message_id")
                }
                _ = try await insertMessage(
                    app: app, conversation: new.conversation, sender: .user(user), id: new.id, parts: new.parts,
                    notification: new.notification, connection, logger)
            }
        case .updateStatus(let message, let status):
            try await addReceipt(app: app, user: user, message: message, status: status, connection, logger)
        case .updateTags(let message, let tags):
            let (record, _) = try await visibleMessage(app: app, id: message, caller: .user(user), connection, logger)
            try await addTags(app: app, user: user, message: record, tags: tags, announce: true, connection, logger)
        }
    }
}

extension PostgresConnection {
    func messageIDTaken(_ id: UUID, logger: Logger) async throws -> Bool {
        let rows = try await query("SELECT 1 FROM sync.messages WHERE id = \(id)", logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
