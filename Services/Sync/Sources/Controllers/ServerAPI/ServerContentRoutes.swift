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
        let scope = try domain.appScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        return try ContentController.slotCreated(
            try await domain.content.open(try content.slot(request), for: conversation, scope))
    }

    /// Content of the conversation, uploaded: what the backend opened for it or what one of its
    /// messages refers to, with a fresh download URL.
    @Sendable func getContent(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let conversation = try context.parameters.layerID("conversation", as: .conversations).uuid
        let id = try context.parameters.layerID("content", as: .content).uuid
        return try Response.json(try await domain.content.content(id, of: conversation, scope))
    }
}
