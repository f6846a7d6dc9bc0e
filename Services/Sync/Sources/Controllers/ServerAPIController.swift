import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API of the sync service: what an app's own backend does under `/apps/:app/…` with
/// a Server API bearer token. It sees conversations in the system view (no per-user fields,
/// including conversations users left), reads them as any one user sees them, acts as a user
/// (reads, sends, receipts, deletions), sends messages as a user or as a named system sender, at
/// once or after a delay, uploads rich content, sends announcements and push-only notifications,
/// manages its users (identity, suspension and sessions, blocks, follows, badges), and exports
/// the app's data.
///
/// The handlers live in extensions under `ServerAPI/`, one file per area.
struct ServerAPIController: Sendable {
    let domain: SyncDomain
    let appTokens: any AppTokenVerifier
    /// Rich content: the Server API opens upload slots as the Client API does.
    let content: ContentController

    func addRoutes(to router: LimitedRoutes) {
        let server = router.group("apps/:app")
            .add(middleware: AcceptHeaderMiddleware(versions: APIVersion.serverAPI))
            .add(middleware: AppTokenMiddleware(verifier: appTokens))

        // Conversations and messages, system view.
        server.post("conversations", use: createConversation)
        server.get("conversations/:conversation", use: getConversation)
        server.patch("conversations/:conversation", use: patchConversation)
        server.delete("conversations/:conversation", use: deleteConversation)
        server.get("conversations/:conversation/messages", use: listMessages)
        server.post("conversations/:conversation/messages", use: sendMessage)
        server.get("conversations/:conversation/messages/:message", use: getMessage)
        server.delete("conversations/:conversation/messages/:message", use: deleteMessage)
        server.get("conversations/:conversation/messages/:message/parts", use: listParts)
        server.post("conversations/:conversation/messages/:message/parts", use: addPart)
        server.put("conversations/:conversation/messages/:message/parts", use: replaceParts)
        server.get("conversations/:conversation/messages/:message/parts/:part", use: getPart)
        server.put("conversations/:conversation/messages/:message/parts/:part", use: replacePart)
        server.delete("conversations/:conversation/messages/:message/parts/:part", use: deletePart)
        server.post("conversations/:conversation/content", use: createContent)
        server.get("conversations/:conversation/content/:content", use: getContent)

        // One user's view, and acting as that user.
        server.get("users/:user/conversations", use: listUserConversations)
        server.get("users/:user/conversations/:conversation", use: getUserConversation)
        server.post("users/:user/conversations/:conversation/mark_all_read", use: markAllRead)
        server.get("users/:user/conversations/:conversation/messages", use: listUserMessages)
        server.post("users/:user/conversations/:conversation/messages", use: sendUserMessage)
        server.get("users/:user/messages/:message", use: getUserMessage)
        server.get("users/:user/search", use: searchAsUser)
        server.post("users/:user/messages/:message/receipts", use: addReceipt)
        server.delete("users/:user/messages/:message", use: deleteUserMessage)

        // The user, their identity, blocks and following.
        server.get("users/:user", use: getUser)
        server.patch("users/:user", use: updateUser)
        server.delete("users/:user/sessions", use: endSessions)
        server.post("users/:user/challenge", use: challenge)
        server.post("users/:user/identity", use: createIdentity)
        server.get("users/:user/identity", use: getIdentity)
        server.put("users/:user/identity", use: replaceIdentity)
        server.patch("users/:user/identity", use: patchIdentity)
        server.delete("users/:user/identity", use: deleteIdentity)
        server.get("users/:user/blocks", use: listBlocks)
        server.post("users/:user/blocks", use: addBlock)
        server.delete("users/:user/blocks/:blocked", use: removeBlock)
        server.get("users/:user/following", use: listFollowing)
        server.post("users/:user/following", use: followMany)
        server.get("users/:user/following/:followed", use: getFollow)
        server.put("users/:user/following/:followed", use: follow)
        server.delete("users/:user/following/:followed", use: unfollow)
        server.get("users/:user/identities", use: listFollowedIdentities)

        server.post("announcements", use: createAnnouncement)
        addChannelRoutes(to: server)

        // Badges, push-only notifications and data exports.
        server.put("users/:user/badge", use: setBadge)
        server.get("users/:user/badge", use: getBadge)
        server.post("notifications", use: sendNotification)
        server.get("push_failures", use: pushFailures)
        server.put("export_security", use: setExportSecurity)
        server.get("export_security", use: getExportSecurity)
        server.post("exports", use: createExport)
        server.get("exports", use: listExports)
        server.get("exports/:export", use: getExport)
        server.delete("exports/:export", use: deleteExport)
        server.get("exports/:export/status", use: getExport)
        server.get("exports/:export/download", use: downloadExport)
        server.put("export_schedule", use: setExportSchedule)
        server.get("export_schedule", use: getExportSchedule)
    }
}
