import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The Server API's batch send: several messages into one conversation, all or none.
extension MessageRepository {
    /// One message of a batch, checked and ready to store.
    struct BatchMessage: Sendable {
        var id: UUID
        var sender: Sender
        var parts: ValidatedParts
        var notification: JSONValue?
    }

    /// Stores `messages` in the order given, in one transaction, each as ``send`` would; nil when
    /// one of their ids is taken (a repeat of the batch got there first), and then none is stored.
    func sendBatch(app: UUID, conversation: UUID, _ messages: [BatchMessage], logger: Logger) async throws -> [SentMessage]? {
        do {
            return try await write(logger: logger) { connection in
                var sent: [SentMessage] = []
                for message in messages {
                    sent.append(
                        try await insertMessage(
                            app: app, conversation: conversation, sender: message.sender, id: message.id,
                            parts: message.parts, notification: message.notification, connection, logger))
                }
                return sent
            }
        } catch let error as PSQLError where error.sqlState == "23505" {
            return nil
        }
    }
}
