import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The identities the sync service answered, kept for ``AuthSettings/identityCacheTTL``. When an
/// identity changes, the sync service tells one auth replica (`/internal/v1/identities/changed`),
/// and a replica reports sign-ins' claims itself; that replica forgets the users at once and
/// tells every replica (itself included) on a PostgreSQL notification channel, where
/// ``IdentityCacheListener`` hears it. Entries are used only while that listener is listening,
/// and all are forgotten whenever it starts listening again, since notices sent meanwhile are
/// lost. An answer that was on its way while a notice about its user arrived is not kept.
final class IdentityCache: Sendable {
    static let channel = "auth_identities"
    static let capacity = 10_000

    struct Key: Hashable {
        var app: UUID
        var user: String
    }

    private struct State {
        var entries: [Key: (identity: InternalAPI.DirectoryIdentity, until: ContinuousClock.Instant)] = [:]
        /// Raised by every notice.
        var generation: UInt64 = 0
        /// The generation at which a user, or every user of an app, was last forgotten, and
        /// before which nothing asked may be kept (the listener started or stopped, or the
        /// record of what was forgotten was itself cleared).
        var userForgotten: [Key: UInt64] = [:]
        var appForgotten: [UUID: UInt64] = [:]
        var forgottenBefore: UInt64 = 0
        var listening = false

        mutating func forgetEverything() {
            generation &+= 1
            forgottenBefore = generation
            entries.removeAll()
            userForgotten.removeAll()
            appForgotten.removeAll()
        }
    }

    let ttl: Duration
    let postgres: PostgresClient
    private let state = Mutex(State())

    init(ttl: Duration, postgres: PostgresClient) {
        self.ttl = ttl
        self.postgres = postgres
    }

    /// The identity kept for `key`, if it is fresh and the listener is listening.
    func identity(_ key: Key) -> InternalAPI.DirectoryIdentity? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard state.listening, let entry = state.entries[key], entry.until > now else { return nil }
            return entry.identity
        }
    }

    /// Where the notices stand: take it before asking the sync service, give it to ``keep``.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Keeps an answer asked for at `generation`, unless a notice about the user came in between.
    func keep(_ identity: InternalAPI.DirectoryIdentity, for key: Key, askedAt generation: UInt64) {
        guard ttl > .zero else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            // A notice raises the generation and records the new one: it came after the question
            // if it records more than the question was asked at.
            guard state.listening, generation >= state.forgottenBefore,
                state.userForgotten[key].map({ $0 <= generation }) ?? true,
                state.appForgotten[key.app].map({ $0 <= generation }) ?? true
            else { return }
            if state.entries.count >= Self.capacity {
                state.entries = state.entries.filter { $0.value.until > now }
                if state.entries.count >= Self.capacity { state.entries.removeAll() }
            }
            state.entries[key] = (identity, now + ttl)
        }
    }

    /// Forgets these users of `app` (every user of it with nil).
    func forget(app: UUID, users: [String]?) {
        state.withLock { state in
            if state.userForgotten.count + (users?.count ?? 0) > Self.capacity {
                state.forgetEverything()
                return
            }
            state.generation &+= 1
            if let users {
                for user in users {
                    let key = Key(app: app, user: user)
                    state.entries[key] = nil
                    state.userForgotten[key] = state.generation
                }
            } else {
                state.entries = state.entries.filter { $0.key.app != app }
                state.appForgotten[app] = state.generation
            }
        }
    }

    /// The listener started or stopped listening: either way, nothing kept can be trusted.
    func listening(_ listening: Bool) {
        state.withLock { state in
            state.forgetEverything()
            state.listening = listening
        }
    }

    /// These users' identities changed: forgotten here at once, and on every replica once the
    /// notice is delivered. Never fails the caller (the entries' lifetime bounds a lost notice).
    func changed(app: UUID, users: [String], logger: Logger) async {
        forget(app: app, users: users)
        do {
            try await postgres.notify(Self.channel, payload: Self.payload(app: app, users: users), logger: logger)
        } catch {
            logger.warning("Could not tell the other auth replicas that identities changed", metadata: ["error": "\(error)"])
        }
    }

    /// A notice, `{"a":app,"u":[user,…]}`, or `{"a":app}` (every user of the app) when the users
    /// would not fit PostgreSQL's payload limit.
    struct Notice: Codable {
        var a: UUID
        var u: [String]?
    }

    static func payload(app: UUID, users: [String]) -> String {
        let text = { (notice: Notice) in String(decoding: (try? JSONEncoder().encode(notice)) ?? Data(), as: UTF8.self) }
        let full = text(Notice(a: app, u: users))
        return full.utf8.count < 7900 ? full : text(Notice(a: app, u: nil))
    }

    func handle(_ payload: String) {
        guard let notice = try? JSONDecoder().decode(Notice.self, from: Data(payload.utf8)) else { return }
        forget(app: notice.a, users: notice.u)
    }
}

/// Listens for ``IdentityCache``'s notices on a connection of its own, and listens again when
/// the connection drops.
struct IdentityCacheListener: Service {
    let cache: IdentityCache
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await cache.postgres.withConnection { connection in
                        try await connection.listen(on: IdentityCache.channel) { notifications in
                            cache.listening(true)
                            for try await notification in notifications { cache.handle(notification.payload) }
                        }
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning("Identity cache listener lost PostgreSQL; listening again", metadata: ["error": "\(error)"])
                }
                cache.listening(false)
                guard !Task.isCancelled else { break }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
