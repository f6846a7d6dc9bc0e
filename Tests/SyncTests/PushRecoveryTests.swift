import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// Push notifications when things go wrong: tokens APNs and FCM no longer take, busy providers,
/// provider tokens that expire, credentials that are refused, and two replicas sharing the jobs.
@Suite("Push notifications: failures and replicas")
struct PushRecoveryTests {
    typealias Harness = PushNotificationHarness

    @Test("A token APNs answers 410 Unregistered, or FCM UNREGISTERED, is removed and not used again")
    func goneTokensAreRemoved() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let apple = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            let google = try await push.register(bob, type: "fcm", token: Harness.fcmToken(), device: "bob-android")
            let kept = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-tablet")
            push.services.scripted.withLock {
                $0[apple] = [.init(410, "Unregistered")]
                $0[google] = [.init(404, "UNREGISTERED")]
            }
            _ = try await push.send("one", from: alice, to: conversation, notification: ["text": "one"])
            _ = try await push.services.waitForPushes(1)
            for _ in 0..<100 where try await push.tokenCount(of: "bob") > 1 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await push.tokenCount(of: "bob") == 1)
            _ = try await push.send("two", from: alice, to: conversation, notification: ["text": "two"])
            _ = try await push.services.waitForPushes(2)
            try await Task.sleep(for: .milliseconds(300))
            #expect(push.services.attempts.withLock { $0.count } == 4, "three for the first message, one for the second")
            #expect(push.services.pushes(to: kept).count == 2)

            let log = try await harness.server().get("/push_failures")
            #expect(log.status == 200)
            let entries = try #require(log.json?.arrayValue)
            #expect(entries.count == 2)
            #expect(Set(entries.compactMap { $0["outcome"]?.stringValue }) == ["token_removed"])
            #expect(Set(entries.compactMap { $0["reason"]?.stringValue }) == ["Unregistered", "UNREGISTERED"])
            #expect(Set(entries.compactMap { $0["device_id"]?.stringValue }) == ["bob-phone", "bob-android"])
        }
    }

    @Test("429 and 503 are tried again with backoff until the push is taken")
    func busyProvidersAreRetried() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let apple = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            let google = try await push.register(bob, type: "fcm", token: Harness.fcmToken(), device: "bob-android")
            push.services.scripted.withLock {
                $0[apple] = [.init(429, "TooManyRequests"), .init(503, "ServiceUnavailable")]
                $0[google] = [.init(503, "UNAVAILABLE", retryAfter: 1)]
            }
            let started = ContinuousClock.now
            _ = try await push.send("retry me", from: alice, to: conversation, notification: ["text": "retry me"])
            let pushes = try await push.services.waitForPushes(2)
            #expect(pushes.count == 2)
            #expect(ContinuousClock.now - started >= .milliseconds(900), "the retries waited")
            #expect(push.services.attempts.withLock { $0.count } == 5)
            #expect(push.services.pushes(to: apple).first?.json?["aps"]?["alert"]?["body"] == "retry me")
            for _ in 0..<100 where try await push.pendingJobs() > 0 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await push.pendingJobs() == 0)
            let log = try #require(try await harness.server().get("/push_failures").json?.arrayValue)
            #expect(log.count == 3)
            #expect(Set(log.compactMap { $0["outcome"]?.stringValue }) == ["retried"])
            #expect(Set(log.compactMap { $0["status"]?.numberValue }) == [429, 503])
        }
    }

    @Test("The APNs provider token is reused until it is due, and made again when APNs says it expired")
    func providerTokenIsReused() async throws {
        let shortLived: @Sendable (inout SyncSettings) -> Void = { $0.pushProviders.providerTokenLifetime = .seconds(2) }
        try await Harness.run(configure: shortLived) { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let token = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            _ = try await push.send("one", from: alice, to: conversation, notification: ["text": "one"])
            _ = try await push.send("two", from: alice, to: conversation, notification: ["text": "two"])
            let first = try await push.services.waitForPushes(2)
            try #require(first.count == 2)
            #expect(first[0].headers["authorization"] == first[1].headers["authorization"], "one token for both")
            try await Task.sleep(for: .milliseconds(2500))
            _ = try await push.send("three", from: alice, to: conversation, notification: ["text": "three"])
            let renewed = try await push.services.waitForPushes(3)
            try #require(renewed.count == 3)
            #expect(renewed[2].headers["authorization"] != renewed[1].headers["authorization"], "made again when due")
            let (_, claims) = try PushDeliveryTests.jwtParts(renewed[2])
            #expect(
                (claims["iat"]?.numberValue ?? 0) > (try PushDeliveryTests.jwtParts(renewed[1]).claims["iat"]?.numberValue ?? 0))

            // APNs says the token expired: a new one, and the push again at once.
            try await Task.sleep(for: .milliseconds(1100))
            push.services.scripted.withLock { $0[token] = [.init(403, "ExpiredProviderToken")] }
            _ = try await push.send("four", from: alice, to: conversation, notification: ["text": "four"])
            let after = try await push.services.waitForPushes(4)
            try #require(after.count == 4)
            #expect(after[3].json?["aps"]?["alert"]?["body"] == "four")
            let tries = push.services.attempts.withLock { $0.suffix(2).map { $0.headers["authorization"] } }
            #expect(tries[0] != tries[1])
            #expect(try await push.providers()?["apns"]?["status"] == "ok")
        }
    }

    @Test("Credentials a provider refuses mark it failing (in the admin API) instead of retrying; new ones make it work again")
    func refusedCredentialsMarkTheProviderFailing() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            let token = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
            push.services.scripted.withLock { $0[token] = [.init(403, "InvalidProviderToken")] }
            _ = try await push.send("one", from: alice, to: conversation, notification: ["text": "one"])
            var shown: JSONValue?
            for _ in 0..<200 {
                shown = try await push.providers()
                if shown?["apns"]?["status"] == "failing" { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(shown?["apns"]?["status"] == "failing")
            #expect(shown?["apns"]?["status_reason"] == "InvalidProviderToken")
            #expect(shown?["fcm"]?["status"] == "ok")
            // Failing: nothing more is sent with it, and nothing is retried.
            _ = try await push.send("two", from: alice, to: conversation, notification: ["text": "two"])
            for _ in 0..<200 where try await push.pendingJobs() > 0 { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await push.pendingJobs() == 0, "its job was done, with nothing sent")
            #expect(push.services.attempts.withLock { $0.count } == 1)
            let metrics = try await harness.client.request(.GET, "/metrics").text
            #expect(metrics.contains("layer_push_notifications_total{provider=\"apns\",result=\"credentials_refused\"}"))

            // The operator sets the credentials again: the provider works again.
            #expect(try await push.setProvider("apns", FakePushServices.apnsCredentials()).json?["status"] == "ok")
            _ = try await push.send("three", from: alice, to: conversation, notification: ["text": "three"])
            let pushes = try await push.services.waitForPushes(1)
            #expect(pushes.first?.json?["aps"]?["alert"]?["body"] == "three")
        }
    }

    @Test("Two replicas of the sync service share the jobs: each push is sent once")
    func twoReplicasSendOnce() async throws {
        try await Harness.run { push in
            try await push.setBothProviders()
            let harness = push.harness
            // A second replica on the same database, with its own sender.
            var second = Harness.settings(push.services)
            second.authURL = harness.client.baseURL
            try await LiveServer.run([SyncService.configured(second)], settings: harness.fixture.server.settings) { _ in
                let alice = try await harness.user("alice")
                let bob = try await harness.user("bob")
                let token = try await push.register(bob, type: "apns", token: Harness.apnsToken(), device: "bob-phone")
                var sent: Set<String> = []
                for index in 0..<4 {
                    let conversation = try await alice.conversation(with: ["bob"], distinct: false)
                    for text in 0..<5 {
                        let message = try await push.send(
                            "\(index).\(text)", from: alice, to: conversation, notification: ["text": .string("\(index).\(text)")]
                        )
                        sent.insert(try #require(message["id"]?.stringValue))
                    }
                }
                _ = try await push.services.waitForPushes(sent.count)
                try await Task.sleep(for: .seconds(2))  // anything sent twice would be here by now
                let pushes = push.services.pushes(to: token)
                let ids = pushes.compactMap { $0.json?["layer"]?["message_identifier"]?.stringValue }
                #expect(pushes.count == sent.count, "no push was sent twice")
                #expect(Set(ids) == sent)
            }
        }
    }
}
