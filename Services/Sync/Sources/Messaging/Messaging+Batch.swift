import Foundation
import LayerModels
import LayerServer
import Logging

/// The Server API's batch send: an array of messages for one conversation, sent in one
/// transaction (all or none) and answered in the order given.
extension Messaging {
    /// One message of a batch as the request gave it, with its sender and the property naming it.
    struct BatchInput: Sendable {
        var body: MessageInput
        var sender: MessageRepository.Sender
        var senderProperty: String
    }

    /// Sends `inputs` into `conversation` under `ids`, all or none, and answers them in the
    /// system view, in order. Each is checked as a single send would be, and a bad one fails the
    /// whole batch with its error put under its index (`3.parts.0.body`). Nil when an id was
    /// taken meanwhile: a concurrent repeat of the batch sent it first.
    func sendBatch(
        _ inputs: [BatchInput], ids: [UUID], app: UUID, conversation: UUID, urls: URLBuilder, logger: Logger
    ) async throws -> [MessageObject]? {
        let members = try await requireConversation(conversation, app: app, logger: logger)
        var messages: [MessageRepository.BatchMessage] = []
        for (index, (input, id)) in zip(inputs, ids).enumerated() {
            do {
                if let user = input.sender.userID, !members.contains(where: { $0.userID == user && $0.isCurrent }) {
                    throw APIError.invalid(input.senderProperty, "'\(user)' is not a participant of this conversation.")
                }
                let (parts, notification) = try await checkedSend(
                    input.body, id: id, app: app, sender: input.sender, appContentOf: conversation, logger: logger)
                messages.append(.init(id: id, sender: input.sender, parts: parts, notification: notification))
            } catch let error as APIError {
                throw error.under(String(index))
            }
        }
        guard let sent = try await repositories.messages.sendBatch(app: app, conversation: conversation, messages, logger: logger)
        else { return nil }
        for message in sent {
            if let user = message.record.senderID {
                relationships.report(app: app, from: user, to: message.members, kind: .message)
            }
        }
        return try await batchMessages(sent.map(\.record.id), app: app, urls: urls, logger: logger)
    }

    /// Those of the messages `ids` that exist, in the system view, in the order of `ids`.
    func batchMessages(_ ids: [UUID], app: UUID, urls: URLBuilder, logger: Logger) async throws -> [MessageObject] {
        try await repositories.read(logger: logger) { connection in
            let found = try await connection.messages(ids: ids, logger: logger).filter { $0.deletedAt == nil }
            let records = ids.compactMap { id in found.first { $0.id == id } }
            var presenter = presenter(app: app, viewer: nil, urls: urls, connection, logger)
            return try await presenter.messages(records)
        }
    }
}
