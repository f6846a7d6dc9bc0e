import Foundation
import LayerModels
import LayerServer
import Logging

/// Delayed sends as they come due (``ScheduledSender`` carries them out on every replica): the
/// next step of whichever is due, the typing indicator of a sender about to send, and what
/// follows a send, which is what follows every send (``Messages/didSend(_:app:)``).
struct ScheduledSends: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let messages: Messages

    init(repositories: SyncRepositories, views: Views, messages: Messages) {
        self.repositories = repositories
        self.views = views
        self.messages = messages
    }

    /// Takes the next step of a delayed send that is due, in one transaction.
    func step(logger: Logger) async throws -> ScheduledMessageRepository.Step {
        let step = try await repositories.scheduled.step(logger: logger)
        if case .sent(let record, let sent) = step { messages.didSend([sent], app: record.appID) }
        return step
    }

    /// How long until the next step is due; nil when nothing waits.
    func secondsUntilNextStep(logger: Logger) async throws -> Double? {
        try await repositories.scheduled.secondsUntilNextStep(logger: logger)
    }

    /// Who is shown the sender typing: the conversation's other current participants; nil when
    /// the conversation is gone (or, with `senderMustBeIn`, the sender left it).
    func typingAudience(of record: ScheduledMessageRecord, senderMustBeIn: Bool, logger: Logger) async throws -> [String]? {
        try await repositories.scheduled.typingAudience(of: record, senderMustBeIn: senderMustBeIn, logger: logger)
    }

    /// The sender of a delayed send as a typing indicator shows it, rendered on the push template.
    func sender(of record: ScheduledMessageRecord, logger: Logger) async throws -> JSONValue {
        guard let user = record.senderID else { return try jsonValue(SenderObject.system(name: record.senderName ?? "")) }
        let scope = views.pushScope(app: record.appID, viewer: user, logger: logger)
        return try await repositories.read(logger: logger) { connection in
            var presenter = views.presenter(scope, connection)
            try await presenter.loadIdentities([user])
            return try jsonValue(presenter.basicIdentity(user))
        }
    }
}
