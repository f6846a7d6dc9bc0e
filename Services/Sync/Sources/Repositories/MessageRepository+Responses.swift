import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Responses (API 3.0): a Response message updates the response summary part of the message it
/// answers, in the transaction that stores the response, so that both are there or neither is.
extension PostgresConnection {
    /// Merges `response`, sent by `user` into `conversation`, into the summary of the node it
    /// answers: the summary part is added to the answered message the first time, and updated
    /// after. Everyone who holds that message hears of its new parts (see ``storeParts``). 422
    /// naming the response part's body when the message answered is not one `user` sees in this
    /// conversation, or has no such node.
    func applyResponse(
        _ response: MessageResponse, from user: String, app: UUID, conversation: UUID, logger: Logger
    ) async throws {
        // Locked until commit: two answers to one message are merged one after the other.
        let rows = try await query(
            """
            SELECT \(unescaped: MessageRecord.columns) FROM sync.messages m
            JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.user_id = \(user)
            WHERE m.app_id = \(app) AND m.id = \(response.target) AND m.conversation_id = \(conversation)
              AND \(unescaped: messageVisibleToParticipant)
            FOR UPDATE OF m
            """, logger: logger)
        var found: MessageRecord?
        for try await row in rows { found = try MessageRecord(row: row) }
        guard var message = found else {
            throw APIError.invalid(response.property, "response_to names no message of this conversation that the sender sees.")
        }
        let node: String
        if let given = response.node {
            guard let part = message.parts.first(where: { $0.nodeID.lowercased() == given.lowercased() }) else {
                throw APIError.invalid(response.property, "response_to_node_id names no part of the message answered.")
            }
            node = part.nodeID
        } else {
            let root = message.parts.first { MIMEParameters.value("role", in: $0.mimeType) == "root" } ?? message.parts[0]
            node = root.nodeID
        }
        var parts = message.parts
        let now = Date()
        let touched: UUID
        let webhookKind: String
        if let index = parts.firstIndex(where: { ResponseSummary.isSummary($0, of: node, response.format) }) {
            let body = try ResponseSummary.merged(parts[index].body, with: response, from: user)
            parts[index] = StoredPart(id: parts[index].id, mimeType: parts[index].mimeType, body: body, updatedAt: now)
            touched = parts[index].id
            webhookKind = "MessagePart.updated"
        } else {
            guard parts.count < PartRules.maxParts else {
                throw APIError.invalid(
                    response.property, "The message answered has \(PartRules.maxParts) parts, the most a message may have.")
            }
            var id = ResponseSummary.partID(message: message.id, node: node)
            if parts.contains(where: { $0.id == id }) { id = UUID() }
            let body = try ResponseSummary.merged(nil, with: response, from: user)
            parts.append(
                StoredPart(id: id, mimeType: ResponseSummary.mimeType(response.format, node: node), body: body, updatedAt: now))
            touched = id
            webhookKind = "MessagePart.created"
        }
        try await storeParts(parts, of: &message, touched: [touched], webhookKind: webhookKind, app: app, logger: logger)
    }
}
