import Crypto
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

    func sendBatch(
        _ buffer: ByteBuffer, tag: UUID?, app: UUID, conversation: UUID, request: Request, context: LayerRequestContext
    ) async throws -> Response {
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
        let urls = service.urls(request)
        var ids = inputs.map { _ in UUID() }
        if let tag {
            let reservation = try await RequestTag.reserve(
                tag, app: app, collection: .messages, repository: service.repositories.requestTags, logger: context.logger)
            ids = inputs.indices.map { Self.batchMessageID(reservation.resource, index: $0) }
            if try await service.repositories.requestTags.resourceExists(
                LayerID(.messages, reservation.resource), app: app, logger: context.logger)
            {
                return try await sentBefore(ids, app: app, conversation: conversation, urls: urls, context: context)
            }
        }
        guard
            let sent = try await service.sendBatch(
                inputs, ids: ids, app: app, conversation: conversation, urls: urls, logger: context.logger)
        else {
            // A concurrent request with the same tag sent the batch first.
            guard tag != nil else { throw APIError(.idInUse, "The requested message ids are already in use.") }
            return try await sentBefore(ids, app: app, conversation: conversation, urls: urls, context: context)
        }
        return try Response.json(sent, status: .created)
    }

    /// The answer to a repeated batch: the messages the first request sent, as they are now.
    private func sentBefore(
        _ ids: [UUID], app: UUID, conversation: UUID, urls: URLBuilder, context: LayerRequestContext
    ) async throws -> Response {
        try await service.requireConversation(conversation, app: app, logger: context.logger)
        let messages = try await service.batchMessages(ids, app: app, urls: urls, logger: context.logger)
        let inConversation = messages.filter { $0.conversation?.id == LayerID(.conversations, conversation).uri }
        return try Response.json(inConversation, status: .created)
    }

    /// One message of a batch, checked as a single send's body is; its errors name their index.
    static func batchInput(_ element: JSONValue, index: Int) throws -> Messaging.BatchInput {
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
            return Messaging.BatchInput(body: body, sender: sender.sender, senderProperty: sender.property)
        } catch let error as APIError {
            throw error.under(property)
        }
    }

    /// The id of message `index` of a batch whose first message has the id `first` (the one
    /// `If-None-Match` reserved): the others follow from it, so a repeat finds them all.
    static func batchMessageID(_ first: UUID, index: Int) -> UUID {
        guard index > 0 else { return first }
        let digest = Array(SHA256.hash(data: Data("\(first.lowercased)/\(index)".utf8)))
        var uuid = first.uuid
        withUnsafeMutableBytes(of: &uuid) { raw in
            for offset in raw.indices { raw[offset] = digest[offset] }
        }
        uuid.6 = (uuid.6 & 0x0f) | 0x80  // version 8: custom
        uuid.8 = (uuid.8 & 0x3f) | 0x80
        return UUID(uuid: uuid)
    }
}
