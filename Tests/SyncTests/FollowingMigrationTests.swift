import Foundation
import LayerServer
import LayerTesting
import Logging
import PostgresNIO
import Testing

@testable import LayerSync

/// Migration 10 on a database of its own: the follows it gives the conversations that existed
/// before it are those its trigger makes for the same history afterwards.
@Suite("The following migration")
struct FollowingMigrationTests {
    /// One conversation's history: Alice, Bob and Dave start it, Dave is removed, Eve joins; and
    /// Bob and Carol in a second one.
    private func makeHistory(app: UUID, _ postgres: PostgresClient) async throws {
        let (first, second) = (UUID(), UUID())
        for conversation in [first, second] {
            _ = try await postgres.query(
                "INSERT INTO sync.conversations (app_id, id, is_distinct) VALUES (\(app), \(conversation), false)",
                logger: .test)
        }
        func join(_ users: [String], _ conversation: UUID) async throws {
            _ = try await postgres.query(
                """
                INSERT INTO sync.participants (app_id, conversation_id, user_id)
                SELECT \(app), \(conversation), u FROM unnest(\(users)::text[]) AS u
                """, logger: .test)
        }
        try await join(["alice", "bob", "dave"], first)
        _ = try await postgres.query(
            """
            UPDATE sync.participants SET left_position = 0, left_at = now(), left_view = jsonb_build_object(
                'metadata', '{}'::jsonb, 'members', '[{"user_id": "alice"}, {"user_id": "bob"}]'::jsonb)
            WHERE conversation_id = \(first) AND user_id = 'dave'
            """, logger: .test)
        try await join(["eve"], first)
        try await join(["bob", "carol"], second)
    }

    private func follows(app: UUID, _ postgres: PostgresClient) async throws -> Set<String> {
        let rows = try await postgres.query(
            "SELECT user_id, followed_id, implicit FROM sync.follows WHERE app_id = \(app)", logger: .test)
        var pairs = Set<String>()
        for try await (user, followed, implicit) in rows.decode((String, String, Bool).self) {
            pairs.insert("\(user)→\(followed)\(implicit ? "" : " (explicit)")")
        }
        return pairs
    }

    @Test("Conversations from before the upgrade give the follows the trigger gives them after it")
    func backfillMatchesTheTrigger() async throws {
        let postgres = try await TestDatabase.isolated().makeClient(logger: .test)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await postgres.run() }
            let before = MigrationRunner(schema: "sync", migrations: syncMigrations.migrations.filter { $0.version < 10 })
            try await before.run(on: postgres, logger: .test)
            let (old, new) = (UUID(), UUID())
            try await makeHistory(app: old, postgres)
            #expect(
                try await syncMigrations.run(on: postgres, logger: .test)
                    == syncMigrations.migrations.map(\.version).filter { $0 >= 10 })
            try await makeHistory(app: new, postgres)

            let expected: Set<String> = [
                "alice→bob", "alice→dave", "alice→eve", "bob→alice", "bob→dave", "bob→eve", "dave→alice", "dave→bob",
                "eve→alice", "eve→bob", "eve→dave", "bob→carol", "carol→bob",
            ]
            #expect(try await follows(app: old, postgres) == expected)
            #expect(try await follows(app: new, postgres) == expected)
            group.cancelAll()
        }
    }
}
