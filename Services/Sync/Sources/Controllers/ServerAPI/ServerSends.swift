import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Sending through the Server API, as a participant, a named system sender or a user acting
/// through the app: at once (201, the message), or with a `schedule` later (202, the delayed send;
/// see ``ScheduledSender``). `If-None-Match` makes either safe to repeat.
extension ServerAPIController {
    /// Sends `body` into `conversation` as `sender`, answering the message as `viewer` sees it
    /// (nil: the system view). With `senderProperty` (the body named the sender), a sending user
    /// who is not a current participant is a 422 naming it; without it (the path named the user),
    /// they get what the Client API answers that user.
    func send(
        _ body: MessageInput, tag: UUID?, app: UUID, conversation: UUID, sender: MessageRepository.Sender,
        senderProperty: String?, viewer: String?, request: Request, context: LayerRequestContext
    ) async throws -> Response {
        var body = body
        let schedule = try SendSchedule.parse(body.schedule)
        let repositories = service.repositories
        var reserved: UUID?
        if let tag {
            let reservation = try await RequestTag.reserve(
                tag, app: app, collection: .messages, repository: repositories.requestTags, logger: context.logger)
            if let earlier = try await repeated(
                reservation.resource, app: app, viewer: viewer, request: request, context: context)
            {
                return earlier
            }
            reserved = reservation.resource
            body.id = reservation.resource.lowercased
        }
        if let senderProperty, let user = sender.userID {
            try await service.requireParticipant(
                user, of: conversation, app: app, property: senderProperty, logger: context.logger)
        }
        guard let schedule else {
            do {
                let message = try await service.sendMessage(
                    body, app: app, conversation: conversation, sender: sender, viewer: viewer, urls: service.urls(request),
                    appContent: true, logger: context.logger)
                return try Response.json(message, status: .created)
            } catch let error as APIError where error.body.id == ErrorID.idInUse.rawValue && reserved != nil {
                // A concurrent request with the same tag sent it under the reserved id first.
                guard let earlier = try await repeated(reserved!, app: app, viewer: viewer, request: request, context: context)
                else { throw error }
                return earlier
            }
        }
        try await service.requireSender(sender, of: conversation, app: app, logger: context.logger)
        let id = reserved ?? UUID()
        let (parts, notification) = try await service.checkedSend(
            body, id: id, app: app, sender: sender, appContentOf: conversation, logger: context.logger)
        let new = ScheduledMessageRepository.NewScheduledMessage(
            app: app, id: id, conversation: conversation, sender: sender, parts: parts, notification: notification,
            schedule: schedule)
        guard let record = try await repositories.scheduled.schedule(new, logger: context.logger) else {
            // A concurrent request with the same tag scheduled it, and it has gone out since.
            guard let earlier = try await repeated(id, app: app, viewer: viewer, request: request, context: context) else {
                throw APIError.notFound("The conversation")
            }
            return earlier
        }
        schedules.ring()
        return try scheduled(record, request: request)
    }

    /// The answer to a repeated `If-None-Match` tag: the message it sent (201), or its delayed
    /// send still waiting (202); nil if neither is there (the first request failed, or its
    /// delayed send was dropped).
    private func repeated(
        _ id: UUID, app: UUID, viewer: String?, request: Request, context: LayerRequestContext
    ) async throws -> Response? {
        let repositories = service.repositories
        if try await repositories.requestTags.resourceExists(LayerID(.messages, id), app: app, logger: context.logger) {
            let object = try await service.message(
                app: app, id: id, viewer: viewer, urls: service.urls(request), logger: context.logger)
            return try Response.json(object, status: .created)
        }
        if let record = try await repositories.scheduled.scheduled(app: app, id: id, logger: context.logger) {
            return try scheduled(record, request: request)
        }
        return nil
    }

    /// 202 with a delayed send.
    private func scheduled(_ record: ScheduledMessageRecord, request: Request) throws -> Response {
        let urls = service.urls(request)
        let object = ScheduledMessageObject(
            id: LayerID(.messages, record.id).uri,
            conversation: ConversationReference(
                id: LayerID(.conversations, record.conversationID).uri,
                url: urls.url(Self.location(app: record.appID, conversation: record.conversationID))),
            scheduledAt: record.createdAt, sendAt: record.sendAt, typingIndicatorAt: record.typingFrom)
        return try Response.json(object, status: .accepted)
    }
}
