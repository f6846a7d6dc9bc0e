import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerSync
import LayerTesting
import LayerVoIP
import PostgresNIO
import Testing

@testable import LayerSync

/// An idle suite leaves its database alone: its background workers (delayed sends, webhook
/// verification and delivery, push notifications, exports, call timers, sign-in reports) sleep
/// until they are rung or their next due time, rather than ask the database every fraction of a
/// second.
@Suite("Idle: the workers sleep")
struct IdleTests {
    @Test("Every service idle in one process: a handful of statements in six seconds, not dozens a second")
    func idleServicesLeaveTheDatabaseAlone() async throws {
        // A database of its own: other tests' work would be counted.
        let settings = ServerSettings(database: try await TestDatabase.isolated())
        try await AuthFixture.run(
            settings: settings, withSync: SyncSettings(), withNames: NamesSettings(),
            withVoIP: VoIPSettings(stunPort: 0, turnSecret: "test-turn-secret")
        ) { fixture in
            let postgres = fixture.server.postgres
            // What starting up does (migrations, first reads, the replica's row) is over by then.
            try await Task.sleep(for: .seconds(2))
            let statements = try await statementsRun(postgres, during: .seconds(6))
            // Left: the replica's heartbeat (every 10 s). Before the workers slept, the same six
            // seconds held about fifty.
            #expect(statements <= 6, "\(statements) statements in 6 s of idleness")
        }
    }

    @Test("With no delayed send the next step is none (not 'now'); with one, it is when it falls due")
    func nextStepOfAnEmptySchedule() async throws {
        let settings = ServerSettings(database: try await TestDatabase.isolated())
        try await AuthFixture.run(settings: settings, withSync: SyncSettings()) { fixture in
            let repository = ScheduledMessageRepository(postgres: fixture.server.postgres)
            #expect(try await repository.secondsUntilNextStep(logger: .test) == nil)

            let token = try await fixture.serverAPIToken()
            let app = "/apps/\(fixture.app.id.lowercased)"
            let auth = [("Authorization", "Bearer \(token)")]
            let created = try await fixture.client.request(
                .POST, "\(app)/conversations", headers: auth, json: ["participants": ["alice", "bob"]])
            #expect(created.status == 201, "\(created.text)")
            let conversation = try #require(created.json?["id"]?.stringValue.flatMap { $0.split(separator: "/").last })
            let delayed: JSONValue = [
                "sender": ["name": "Bot"], "parts": [["mime_type": "text/plain", "body": "later"]],
                "schedule": ["delay_in_seconds": 300],
            ]
            let response = try await fixture.client.request(
                .POST, "\(app)/conversations/\(conversation)/messages", headers: auth, json: delayed)
            #expect(response.status == 202, "\(response.text)")
            let seconds = try #require(try await repository.secondsUntilNextStep(logger: .test))
            #expect((250...300).contains(seconds), "\(seconds)")
        }
    }

    /// How many statements the other connections to the database began during `duration`, seen
    /// by sampling `pg_stat_activity` every 20 ms (its counters reach `pg_stat_database` only
    /// seconds later). Statements of one connection within 20 ms count once.
    private func statementsRun(_ postgres: PostgresClient, during duration: Duration) async throws -> Int {
        // One connection held for the whole sampling, so that the service's queries run on others.
        try await postgres.withConnection { connection in
            func sample() async throws -> Set<String> {
                let rows = try await connection.query(
                    """
                    SELECT pid || '/' || coalesce(query_start::text, '') FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid()
                    """, logger: .test)
                var started = Set<String>()
                for try await statement in rows.decode(String.self) { started.insert(statement) }
                return started
            }
            let before = try await sample()
            var seen = before
            let end = ContinuousClock.now + duration
            while ContinuousClock.now < end {
                try await Task.sleep(for: .milliseconds(20))
                seen.formUnion(try await sample())
            }
            return seen.subtracting(before).count
        }
    }
}
