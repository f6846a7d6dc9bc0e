import Foundation
import LayerModels
import LayerServer
import LayerTesting
import PostgresNIO
import Testing

/// The statements of the hot path (a send, its push to a listening device, reading and syncing a
/// conversation) each find their rows by app: distributed by `app_id` (docs/scale.md), each goes
/// to one node. They are caught as they run, from `pg_stat_activity`.
@Suite("App data: the hot path filters by app")
struct HotQueryTests {
    @Test("Every statement of sends, pushes, reads and syncs that reads or writes app tables names app_id")
    func hotStatementsNameTheApp() async throws {
        let settings = ServerSettings(database: try await TestDatabase.isolated())
        try await SyncHarness.run(server: settings) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let base = harness.fixture.server.baseURL.replacingOccurrences(of: "http://", with: "ws://")
            let socket = try await TestWebSocket.connect(url: "\(base)/websocket?session_token=\(bob.token)")
            defer { Task { try? await socket.close() } }
            let seen = try await statements(harness.fixture.server.postgres) {
                for index in 0..<40 {
                    let message = try await alice.send("hello \(index)", to: conversation)
                    _ = try await bob.post(
                        "/\(path(message["id"]?.stringValue ?? ""))/receipts", ["type": "read"])
                }
                _ = try await bob.get("/\(path(conversation))/messages")
                _ = try await bob.get("/conversations")
                _ = try await bob.sync()
            }
            let unfiltered = seen.filter { statement in
                Self.appTables.contains { statement.contains($0) } && !statement.contains("app_id")
            }
            #expect(seen.count > 10, "the workload's statements were not seen: \(seen.count)")
            #expect(unfiltered.sorted() == [], "hot statements without app_id")
        }
    }

    /// Tables of app data the hot path touches. (The outboxes' own workers take due rows of every
    /// app; how they work per app once distributed is in docs/scale.md.)
    static let appTables = [
        "sync.messages", "sync.participants", "sync.conversations", "sync.changelog", "sync.receipts",
        "sync.user_seqs", "sync.identities", "sync.devices", "sync.badges", "sync.blocks", "auth.sessions", "auth.users",
    ]

    /// The distinct statements other connections ran while `work` ran, sampled every few
    /// milliseconds from one connection held for it.
    private func statements(_ postgres: PostgresClient, during work: () async throws -> Void) async throws -> Set<String> {
        try await postgres.withConnection { connection in
            try await withThrowingTaskGroup(of: Set<String>.self) { group in
                let done = StopFlag()
                // Each connection's latest statement, by when it began: those there before the
                // work (start-up, the workers' first rounds) are not the work's.
                @Sendable func sample() async throws -> [String: String] {
                    let rows = try await connection.query(
                        """
                        SELECT pid || '/' || coalesce(query_start::text, ''), query FROM pg_stat_activity
                        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query <> ''
                          AND backend_type = 'client backend'
                        """, logger: .test)
                    var statements: [String: String] = [:]
                    for try await (started, query) in rows.decode((String, String).self) { statements[started] = query }
                    return statements
                }
                let before = try await sample()
                group.addTask {
                    var seen = Set<String>()
                    while !done.isSet {
                        for (started, query) in try await sample() where before[started] == nil { seen.insert(query) }
                    }
                    return seen
                }
                try await work()
                done.set()
                return try await group.next() ?? []
            }
        }
    }
}
