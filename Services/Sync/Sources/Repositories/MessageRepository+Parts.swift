import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Updatable message parts (API 3.0): the Server API adds, replaces and deletes the parts of a
/// message after it was sent. Each change stamps the parts it touched and the message with the
/// time, tells everyone who holds the message (a `new_message` with its new parts in their
/// changelogs, pushed to their devices), and records the `MessagePart.*` webhook event.
extension MessageRepository {
    enum PartChange: Sendable {
        case add(StoredPart)
        case replace(UUID, StoredPart)
        case replaceAll([StoredPart])
        case delete(UUID)

        var webhookKind: String {
            switch self {
            case .add: "MessagePart.created"
            case .replace, .replaceAll: "MessagePart.updated"
            case .delete: "MessagePart.deleted"
            }
        }
    }

    /// Applies `change` to the parts of message `id` of `conversation`; the message as it is
    /// after it. 404 for a message (or part) that is not there, 422 for a change that would leave
    /// the message without parts or with more than ``PartRules/maxParts``, 409 for an added part
    /// whose id the message has already.
    func changeParts(
        app: UUID, conversation: UUID, message id: UUID, _ change: PartChange, contentIDs: [UUID], logger: Logger
    ) async throws -> MessageRecord {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: MessageRecord.columns) FROM sync.messages m
                WHERE m.app_id = \(app) AND m.id = \(id) AND m.conversation_id = \(conversation) AND m.deleted_at IS NULL
                FOR UPDATE
                """, logger: logger)
            var found: MessageRecord?
            for try await row in rows { found = try MessageRecord(row: row) }
            guard var message = found else { throw APIError.notFound("The message") }
            let now = Date()
            var parts = message.parts
            var touched: [UUID] = []
            switch change {
            case .add(var part):
                guard !parts.contains(where: { $0.id == part.id }) else {
                    throw APIError(.idInUse, "The message has a part with the id \(part.id.lowercased) already.")
                }
                part.updatedAt = now
                parts.append(part)
                touched = [part.id]
            case .replace(let partID, var part):
                guard let index = parts.firstIndex(where: { $0.id == partID }) else { throw APIError.notFound("The part") }
                part.id = partID
                part.updatedAt = now
                parts[index] = part
                touched = [partID]
            case .replaceAll(let all):
                parts = all.map { part in
                    var part = part
                    part.updatedAt = now
                    return part
                }
                touched = parts.map(\.id)
            case .delete(let partID):
                guard parts.contains(where: { $0.id == partID }) else { throw APIError.notFound("The part") }
                guard parts.count > 1 else {
                    throw APIError(.invalidOperation, "A message keeps at least one part; delete the message instead.")
                }
                parts.removeAll { $0.id == partID }
                touched = [partID]
            }
            guard parts.count <= PartRules.maxParts else {
                throw APIError.invalid("parts", "A message has at most \(PartRules.maxParts) parts.")
            }
            try await connection.storeParts(
                parts, of: &message, touched: touched, webhookKind: change.webhookKind, contentIDs: contentIDs, app: app,
                logger: logger)
            return message
        }
    }
}

extension PostgresConnection {
    /// Stores `parts` as the parts of `message` (locked by the caller) and tells of it: the
    /// message's `updated_at`, a `new_message` in the changelog of everyone who holds it, and a
    /// `webhookKind` event for each part `touched`.
    func storeParts(
        _ parts: [StoredPart], of message: inout MessageRecord, touched: [UUID], webhookKind: String, contentIDs: [UUID] = [],
        app: UUID, logger: Logger
    ) async throws {
        let partsText = String(decoding: try JSONEncoder().encode(parts), as: UTF8.self)
        let updated = try await query(
            """
            UPDATE sync.messages SET parts = \(partsText)::jsonb, updated_at = clock_timestamp()
            WHERE app_id = \(app) AND id = \(message.id) RETURNING updated_at
            """, logger: logger)
        for try await time in updated.decode(Date.self) { message.updatedAt = time }
        message.parts = parts
        try await linkContent(contentIDs, message: message.id, conversation: message.conversationID, app: app, logger: logger)
        let holders = try await usersSeeing(message.id, logger: logger)
        try await appendChange(
            app: app, users: holders, .newMessage, conversation: message.conversationID, message: message.id, logger: logger)
        for part in touched {
            try await query(
                """
                SELECT sync.record_webhook_event(
                    \(app), \(webhookKind), \(message.conversationID), \(message.id), NULL, NULL,
                    jsonb_build_object('part_id', \(part.lowercased)::text))
                """, logger: logger)
        }
    }
}
