import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// The batch form of `POST /apps/:app/conversations/:conversation/messages` (the original's):
/// a JSON array of messages, each as a single send takes it, sent in one transaction and
/// answered 201 with the messages in the order given. One bad message refuses the whole batch
/// with its error under its index (`2.parts.0.body`), and nothing is sent. `If-None-Match` covers
/// the batch as a whole: a repeat answers the messages the first request sent.
extension ServerAPIController {
    static let maxBatchMessages = 100
    static let maxBatchBytes = 1024 * 1024

    func sendBatch(_ buffer: ByteBuffer, tag: UUID?, conversation: UUID, scope: Scope) async throws -> Response {
        let elements = try Request.decodeJSON([JSONValue].self, from: buffer)
        guard !elements.isEmpty else {
            throw APIError.invalid("body", "A batch holds 1 to \(Self.maxBatchMessages) messages; this one is empty.")
        }
        guard elements.count <= Self.maxBatchMessages else {
            throw APIError(
                .requestTooLarge, "A batch holds at most \(Self.maxBatchMessages) messages; send the rest in another.",
                property: "body")
        }
        let inputs = try elements.enumerated().map { try Self.batchInput($1, index: $0) }
        return try Response.json(
            try await domain.messages.sendBatch(inputs, to: conversation, tag: tag, scope), status: .created)
    }

    /// One message of a batch, checked as a single send's body is; its errors name their index.
    static func batchInput(_ element: JSONValue, index: Int) throws -> Messages.BatchInput {
        let property = String(index)
        guard case .object(let fields) = element else {
            throw APIError.invalid(property, "Each message of a batch is an object.")
        }
        if let unknown = fields.keys.sorted().first(where: { !MessageInput.serverKeys.contains($0) }) {
            throw APIError.invalid("\(property).\(unknown)", "'\(unknown)' is not a property of a message.")
        }
        guard fields["schedule"] == nil else {
            throw APIError.invalid("\(property).schedule", "A batch is sent at once; send a delayed message on its own.")
        }
        let body = try element.decode(MessageInput.self, property: property)
        do {
            let sender = try ServerSender.parse(senderID: body.senderID, sender: body.sender)
            return Messages.BatchInput(body: body, sender: sender.sender, senderProperty: sender.property)
        } catch let error as APIError {
            throw error.under(property)
        }
    }
}
