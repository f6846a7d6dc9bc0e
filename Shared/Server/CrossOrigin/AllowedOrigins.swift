import Foundation
import Hummingbird
import LayerModels
import Logging
import Synchronization

/// Where the apps' own allowed origins come from: the auth service's tables in the process
/// that runs it, its internal API in the others.
public protocol AppOriginSource: Sendable {
    /// Every app that allows an origin, with the rules it allows.
    func appOrigins(logger: Logger) async throws -> [UUID: [String]]
}

/// The web origins browsers may call the suite from: the operator's list (`LAYER_CORS_ORIGINS`)
/// plus each app's own (`allowed_origins`, set through the admin API). Requests made for an app
/// (with a session or a Server API token of it) are judged by the operator's list and that
/// app's; requests made before the app is known (a preflight, `POST /nonces`) by the operator's
/// list and any app's.
///
/// The apps' lists are read once and kept for ``ttl``; an origin not found in a list older than
/// that makes the next check read it again, so an origin just added works at once, and a list
/// is read at most once per ``ttl`` whatever origins browsers send.
public final class AllowedOrigins: Sendable {
    public let operatorRules: [OriginRule]
    let ttl: Duration

    private struct State {
        var source: (any AppOriginSource)?
        var apps: [UUID: [OriginRule]] = [:]
        var readAt: ContinuousClock.Instant?
        var reading: Task<Void, Never>?
        /// Moved by every change: a read that began before a change does not count as fresh.
        var generation = 0
    }
    private let state = Mutex(State())

    public init(operatorRules: [OriginRule], ttl: Duration = .seconds(5)) {
        self.operatorRules = operatorRules
        self.ttl = ttl
    }

    /// Takes the apps' lists from `source` (the host does, once its services are built).
    public func use(_ source: any AppOriginSource) {
        state.withLock { state in
            state.source = source
            state.readAt = nil
        }
    }

    /// An app's list changed in this process: the next check reads the lists again.
    public func invalidate() {
        state.withLock { state in
            state.readAt = nil
            state.generation += 1
        }
    }

    /// Whether a browser on `origin` may read the answers of a request made for `app` (nil: for
    /// no app yet).
    public func allows(_ origin: String, app: UUID?, logger: Logger) async -> Bool {
        if operatorRules.allows(origin) { return true }
        var (apps, fresh, known) = snapshot()
        // Lists that only grew old still say yes while they are read again; lists known to have
        // changed (or never read) are read before anything is answered.
        if known, Self.allows(origin, app: app, in: apps) {
            if !fresh { _ = startReading(logger: logger) }
            return true
        }
        // A read already under way may have begun before the change that allows the origin:
        // then a second one is made.
        for _ in 0..<2 {
            guard !fresh, let reading = startReading(logger: logger) else { return false }
            await reading.value
            (apps, fresh, known) = snapshot()
            if Self.allows(origin, app: app, in: apps) { return true }
        }
        return false
    }

    /// The apps' lists; whether they are younger than ``ttl``; whether they are what was last read
    /// (no change in this process since, nor never read).
    private func snapshot() -> (apps: [UUID: [OriginRule]], fresh: Bool, known: Bool) {
        state.withLock { ($0.apps, $0.readAt.map { ContinuousClock.now - $0 < ttl } ?? false, $0.readAt != nil) }
    }

    private static func allows(_ origin: String, app: UUID?, in apps: [UUID: [OriginRule]]) -> Bool {
        if let app { return apps[app]?.allows(origin) ?? false }
        return apps.values.contains { $0.allows(origin) }
    }

    /// The read in progress, or a new one; nil when there is no source.
    private func startReading(logger: Logger) -> Task<Void, Never>? {
        state.withLock { state in
            guard let source = state.source else { return nil }
            if let reading = state.reading { return reading }
            let generation = state.generation
            let reading = Task { await self.read(from: source, generation: generation, logger: logger) }
            state.reading = reading
            return reading
        }
    }

    private func read(from source: any AppOriginSource, generation: Int, logger: Logger) async {
        let apps: [UUID: [OriginRule]]?
        do {
            apps = try await source.appOrigins(logger: logger).mapValues { [OriginRule].parsing($0).rules }
        } catch {
            // The lists read before stay in force; the next check after ``ttl`` tries again.
            logger.warning("Could not read the apps' allowed origins", metadata: ["error": "\(error)"])
            apps = nil
        }
        state.withLock { state in
            if let apps { state.apps = apps }
            state.readAt = state.generation == generation ? .now : nil
            state.reading = nil
        }
    }
}

/// The apps' allowed origins as the auth service answers them over internal HTTP.
public struct RemoteAppOrigins: AppOriginSource {
    let auth: InternalClient

    public init(auth: InternalClient) {
        self.auth = auth
    }

    public func appOrigins(logger: Logger) async throws -> [UUID: [String]] {
        struct Empty: Encodable {}
        let answer = try await auth.post(
            InternalAPI.originsPath, body: Empty(), as: InternalAPI.AppOrigins.self, idempotent: true, logger: logger)
        return Dictionary(answer.apps.map { ($0.appID, $0.origins) }, uniquingKeysWith: { first, _ in first })
    }
}

extension AllowedOrigins {
    /// Whether a push connection (a WebSocket, an event stream) that came with `Origin: origin`
    /// may go on for `app` (nil: for no app yet). A browser opens one from any page without asking
    /// the server first, so a page of another site holding a stolen token could use it
    /// (cross-site WebSocket hijacking). Pages of the suite's own origin (`authority`, the
    /// request's `Host`) and of the allowed origins may; origins that are no web page's (an app's
    /// web view, a client that is no browser) may too.
    public func mayConnect(origin: String, authority: String?, app: UUID?, logger: Logger) async -> Bool {
        if let page = WebOrigin(origin) {
            if !page.isWebPage { return true }
            if let authority, page.isServed(byAuthority: authority) { return true }
        }
        return await allows(origin, app: app, logger: logger)
    }

    /// Refuses (403 `access_denied`, naming `Origin`) a push connection that may not go on (see
    /// ``mayConnect(origin:authority:app:logger:)``). A request without `Origin` is no browser's
    /// and passes.
    public func requireAllowed(_ request: Request, app: UUID?, logger: Logger) async throws {
        guard let origin = request.headers[.origin] else { return }
        guard await mayConnect(origin: origin, authority: request.head.authority, app: app, logger: logger) else {
            throw Self.refusal(origin: origin)
        }
    }

    static func refusal(origin: String) -> APIError {
        APIError(
            .accessDenied,
            "Pages on \(origin.prefix(200)) may not connect here: the operator or the app must allow that origin.",
            data: ["header": "Origin"])
    }
}
