import Foundation
import LayerModels
import LayerTesting
import PostgresNIO
import Testing

/// The message and unread counts kept in each participant's row (``m0008ParticipantCounts``)
/// against a recount of the history by their definition.
@Suite("Kept message and unread counts")
struct ParticipantCountTests {
    @Test(
        "After random sends, edits, receipts, tags, deletions, mark-all-read, joins, leaves, clears and blocks, every participant's kept counts equal a recount",
        arguments: [11, 12, 13] as [UInt64])
    func keptCountsMatchARecount(seed: UInt64) async throws {
        try await SyncHarness.run { harness in
            var users: [UserClient] = []
            for name in ["alice", "bob", "carol", "dave"] { users.append(try await harness.user(name)) }
            let api = try await harness.server()
            var run = ConvergenceRun(seed: seed, users: users, api: api)
            let first = try await users[0].conversation(with: ["bob", "carol", "dave"], distinct: false)
            run.conversations = [first]
            run.members[first] = Set(users.map(\.id))
            _ = run.name(first)
            for _ in 0..<90 {
                if run.chance(6) {
                    // A block or its lifting, which recounts the blocker's conversations.
                    let owner = run.pick(users)!.id
                    let blocked = run.pick(users.filter { $0.id != owner })!.id
                    let response =
                        run.chance(60)
                        ? try await api.post("/users/\(owner)/blocks", ["user_id": .string(blocked)])
                        : try await api.delete("/users/\(owner)/blocks/\(blocked)")
                    run.record("\(owner) blocks/unblocks \(blocked)", response)
                }
                try await run.step()
            }

            let rows = try await harness.fixture.server.postgres.query(
                """
                SELECT p.conversation_id, p.user_id, p.message_count, p.unread_count, c.total, c.unread
                FROM sync.participants p,
                    LATERAL sync.count_messages(p.app_id, p.conversation_id, p.user_id, p.cleared_position,
                        p.left_position, p.read_position, false) c
                WHERE p.app_id = \(harness.fixture.app.id)
                """, logger: .test)
            var compared = 0
            var counted = 0
            var wrong: [String] = []
            for try await (conversation, user, kept, keptUnread, total, unread) in rows.decode(
                (UUID, String, Int64, Int64, Int64, Int64).self)
            {
                compared += 1
                if total > 0 && unread > 0 { counted += 1 }
                if (kept, keptUnread) != (total, unread) {
                    wrong.append(
                        "\(user) in \(run.shortName(LayerID(.conversations, conversation).uri)): kept \(kept)/\(keptUnread), recounted \(total)/\(unread)"
                    )
                }
            }
            #expect(compared >= 4)
            // The run did make messages that count, and unread ones.
            #expect(counted > 0)
            #expect(
                wrong.isEmpty,
                """
                seed \(seed): kept counts differ from a recount:
                \(wrong.joined(separator: "\n"))
                steps:
                \(run.log.joined(separator: "\n"))
                """)
        }
    }
}
