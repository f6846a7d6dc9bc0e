import Foundation
import LayerModels
import LayerTesting
import PostgresNIO
import Testing

@testable import LayerAuth

/// What the auth service keeps of the sync service's answers about users, and when it lets go.
@Suite struct IdentityCacheTests {
    func cache() -> IdentityCache {
        // Never run: keeping and forgetting do not touch the database.
        let postgres = PostgresClient(
            configuration: .init(host: "127.0.0.1", port: 1, username: "none", password: nil, database: nil, tls: .disable))
        return IdentityCache(ttl: .seconds(60), postgres: postgres)
    }

    let app = UUID()
    func key(_ user: String) -> IdentityCache.Key { .init(app: app, user: user) }
    func identity(_ user: String, _ name: String) -> InternalAPI.DirectoryIdentity { .init(userID: user, displayName: name) }

    @Test func nothingIsKeptUnlessTheListenerListens() {
        let cache = cache()
        cache.keep(identity("ann", "Ann"), for: key("ann"), askedAt: cache.generation)
        #expect(cache.identity(key("ann")) == nil)
        cache.listening(true)
        cache.keep(identity("ann", "Ann"), for: key("ann"), askedAt: cache.generation)
        #expect(cache.identity(key("ann"))?.displayName == "Ann")
        cache.listening(false)
        #expect(cache.identity(key("ann")) == nil)
    }

    @Test func anAnswerAskedBeforeANoticeAboutItsUserIsNotKept() {
        let cache = cache()
        cache.listening(true)
        let asked = cache.generation
        cache.forget(app: app, users: ["ann"])
        cache.keep(identity("ann", "Old"), for: key("ann"), askedAt: asked)
        #expect(cache.identity(key("ann")) == nil)
        // A notice about someone else does not matter; nor one about the user before the question.
        let again = cache.generation
        cache.forget(app: app, users: ["bob"])
        cache.keep(identity("ann", "New"), for: key("ann"), askedAt: again)
        #expect(cache.identity(key("ann"))?.displayName == "New")
        // A notice about every user of the app counts for each of them, and forgets them.
        let third = cache.generation
        cache.forget(app: app, users: nil)
        #expect(cache.identity(key("ann")) == nil)
        cache.keep(identity("ann", "Newer"), for: key("ann"), askedAt: third)
        #expect(cache.identity(key("ann")) == nil)
        // Listening again (notices may have been lost) refuses what was asked before.
        let fourth = cache.generation
        cache.listening(true)
        cache.keep(identity("ann", "Lost"), for: key("ann"), askedAt: fourth)
        #expect(cache.identity(key("ann")) == nil)
    }

    @Test func noticesOnTheChannelForgetUsers() {
        let cache = cache()
        cache.listening(true)
        cache.keep(identity("ann", "Ann"), for: key("ann"), askedAt: cache.generation)
        cache.keep(identity("bob", "Bob"), for: key("bob"), askedAt: cache.generation)
        cache.handle(IdentityCache.payload(app: app, users: ["ann"]))
        #expect(cache.identity(key("ann")) == nil)
        #expect(cache.identity(key("bob"))?.displayName == "Bob")
        // Too many users for one notice: the notice names the app, and every user of it goes.
        let many = (0..<2000).map { "user-with-a-long-name-\($0)" }
        #expect(IdentityCache.payload(app: app, users: many).utf8.count < 100)
        cache.handle(IdentityCache.payload(app: app, users: many))
        #expect(cache.identity(key("bob")) == nil)
    }
}
