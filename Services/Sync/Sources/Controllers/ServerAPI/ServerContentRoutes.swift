import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Rich content through the Server API: the app's backend opens an upload slot for a conversation
/// (with the `Upload-*` headers of `POST /content`), uploads to the signed `upload_url` it gets,
/// refers to the content from a part of a message it sends to that conversation, and refreshes
/// the download URL here. The content belongs to the app and that conversation: no other
/// conversation's sends, no user's own sends and no other app may use it.
extension ServerAPIController {
    @Sendable func createContent(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        try await service.requireConversation(conversation, app: app, logger: context.logger)
        let record = try await content.openSlot(
            request, app: app, owner: ContentRecord.appOwner, conversation: conversation, logger: context.logger)
        return try content.slotCreated(
            record, request: request, location: Self.location(app: app, conversation: conversation, content: record.id))
    }

    /// Content of the conversation, uploaded: what the backend opened for it or what one of its
    /// messages refers to, with a fresh download URL.
    @Sendable func getContent(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try appID(context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("content", as: .content).uuid
        let record = try await service.repositories.content.conversationContent(
            app: app, conversation: conversation, id: id, logger: context.logger)
        return try Response.json(content.downloadable(record, request: request))
    }
}
