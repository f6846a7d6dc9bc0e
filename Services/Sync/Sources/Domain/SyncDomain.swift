import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What the sync service does, whatever carries the request: one use-case type per aggregate,
/// each keeping its repositories to itself. The Client API, the Server API (as the app or acting
/// as one of its users), WebSocket requests and the background workers all call the same
/// methods, with plain values and a ``Scope`` in and the API's objects out; each transport
/// decodes and encodes its own way, and none of them sees a repository.
struct SyncDomain: Sendable {
    let conversations: Conversations
    let messages: Messages
    let channels: Channels
    let content: RichContent
    let identities: Identities
    let users: Users
    let blocks: Blocks
    let following: Following
    let announcements: Announcements
    let changes: Changes
    let badges: Badges
    let exports: Exports
    let webhooks: Webhooks
    let pushNotifications: PushNotifications
    let views: Views
    /// Typing indicators and the relationship report of delayed sends; see ``ScheduledSender``.
    let scheduled: ScheduledSends

    init(
        repositories: SyncRepositories, views: Views, relationships: RelationshipReporter, auth: InternalClient,
        contentSettings: RichContent.Settings, schedules: Alarm, exportRequests: Alarm, webhooks: WebhookSettings,
        pushNotifications: PushNotifications
    ) {
        self.pushNotifications = pushNotifications
        self.views = views
        let identities = Identities(
            repositories: repositories, views: views, recorder: IdentityRecorder(repositories: repositories))
        let conversations = Conversations(repositories: repositories, views: views)
        let content = RichContent(
            repositories: repositories, views: views, conversations: conversations, settings: contentSettings)
        let channels = Channels(repositories: repositories, views: views, content: content)
        let messages = Messages(
            repositories: repositories, views: views, relationships: relationships, conversations: conversations,
            channels: channels, content: content, schedules: schedules)
        self.identities = identities
        self.conversations = conversations
        self.channels = channels
        self.content = content
        self.messages = messages
        let blocks = Blocks(repositories: repositories, views: views)
        self.blocks = blocks
        users = Users(repositories: repositories, views: views, blocks: blocks, auth: auth)
        following = Following(repositories: repositories, views: views, identities: identities)
        announcements = Announcements(repositories: repositories, views: views, identities: identities, content: content)
        changes = Changes(repositories: repositories, views: views, content: content)
        badges = Badges(repositories: repositories)
        exports = Exports(repositories: repositories, requests: exportRequests)
        self.webhooks = Webhooks(
            repositories: repositories, secrets: webhooks.secrets, targets: webhooks.targets,
            verifications: webhooks.verifications, deliveries: webhooks.deliveries, delivery: webhooks.delivery)
        scheduled = ScheduledSends(repositories: repositories, views: views, messages: messages)
    }

    /// The scope of a session-authenticated request: its user, whose identity is brought up to
    /// date with the session's claims on the way.
    func userScope(_ request: Request, _ context: LayerRequestContext) async throws -> Scope {
        let session = try context.requireSession()
        try await identities.record(session, logger: context.logger)
        return Scope(
            app: session.appID, caller: .user(session.userID), isBackend: false, urls: views.urls(request),
            logger: context.logger)
    }

    /// The scope of a Server API request as the app itself (the token middleware has checked the
    /// caller belongs to the app of the path).
    func appScope(_ request: Request, _ context: LayerRequestContext) throws -> Scope {
        Scope(
            app: try context.parameters.layerID("app", as: .apps).uuid, caller: .app, isBackend: true,
            urls: views.urls(request), logger: context.logger)
    }

    /// The scope of a Server API request acting as the user of the path, who must exist (404
    /// `not_found` otherwise).
    func actingUserScope(_ request: Request, _ context: LayerRequestContext) async throws -> Scope {
        let app = try appScope(request, context)
        let user = try context.parameters.appUserID("user")
        try await identities.requireUser(user, app.appWide)
        return app.acting(as: user)
    }
}

/// What the webhooks use case is built with.
struct WebhookSettings: Sendable {
    let secrets: SealedSecrets
    let targets: WebhookTargets
    let verifications: Alarm
    let deliveries: Alarm
    let delivery: WebhookDeliverySettings
}

/// Who asks (a user, or the app itself), for which app, where the answer's URLs point, and the
/// request's logger: what every use case takes.
struct Scope: Sendable {
    let app: UUID
    let caller: Caller
    /// Whether the app's backend asks (the Server API), as itself or acting as one of its users.
    let isBackend: Bool
    let urls: URLBuilder
    let logger: Logger

    /// The user whose view this is; nil for the app's system view.
    var viewer: String? { caller.userID }

    /// The user of a scope that is a user's (the Client API's, or the Server API acting as one).
    var user: String {
        guard case .user(let user) = caller else { preconditionFailure("a use case for users was called as the app") }
        return user
    }

    /// The same request as the app itself (its checks that do not depend on who asks).
    var appWide: Scope { Scope(app: app, caller: .app, isBackend: isBackend, urls: urls, logger: logger) }

    /// The same request on behalf of `user`.
    func acting(as user: String) -> Scope {
        Scope(app: app, caller: .user(user), isBackend: isBackend, urls: urls, logger: logger)
    }
}

/// A new object, or an existing one that a create found instead (a distinct conversation, a
/// repeated request).
struct Created<Object: Sendable>: Sendable {
    var object: Object
    var isNew: Bool
}

/// What renders the API's objects for the use cases: URLs, signed content links, and the push
/// template that devices fill in with their own base.
struct Views: Sendable {
    let links: ContentLinks
    /// The base of the URLs in what is pushed to devices, each of which fills in its own.
    let pushURLs: PushURLTemplate
    let publicBaseURL: String?
    let tls: Bool

    /// Where the objects answered to `request` point their URLs: at the Server API's paths for a
    /// request under `/apps/<app>/`, else at the Client API's.
    func urls(_ request: Request) -> URLBuilder {
        var urls = request.urls(publicBaseURL: publicBaseURL, tls: tls)
        let path = request.uri.path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: true)
        if path.count > 1, path[0] == "apps", let segment = String(path[1]).removingPercentEncoding {
            urls.serverAPIApp = LayerID(parsing: segment, as: .apps)?.uuid ?? UUID(uuidString: segment)
        }
        return urls
    }

    /// A presenter for `scope` that loads what it needs over `connection`.
    func presenter(_ scope: Scope, _ connection: PostgresConnection) -> Presenter {
        Presenter(
            app: scope.app, viewer: scope.viewer, urls: scope.urls, links: links, reads: PresenterReads(connection),
            logger: scope.logger)
    }

    /// A presenter that only renders what it is given.
    func renderer(_ scope: Scope) -> Presenter {
        Presenter(app: scope.app, viewer: scope.viewer, urls: scope.urls, links: links, reads: nil, logger: scope.logger)
    }

    /// The scope of something pushed to devices in `app` (rendered once on the push template).
    func pushScope(app: UUID, viewer: String?, logger: Logger) -> Scope {
        Scope(app: app, caller: viewer.map(Caller.user) ?? .app, isBackend: false, urls: pushURLs.urls, logger: logger)
    }
}

/// An encodable object as a `JSONValue`, to put it in an error's `data`.
func jsonValue(_ value: some Encodable) throws -> JSONValue {
    try LayerJSONDecoder.make().decode(JSONValue.self, from: StreamingJSONEncoder.data(value))
}
