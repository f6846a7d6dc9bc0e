import Foundation
import LayerServer
import LayerTesting
import Logging
import PostgresNIO
import Testing

/// Migrations and the embedded PostgreSQL, against real PostgreSQL.
@Suite struct DatabaseTests {
    func withPostgres<T: Sendable>(_ body: @Sendable (PostgresClient) async throws -> T) async throws -> T {
        let client = try await TestDatabase.settings().makeClient(logger: .test)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    func runner(_ schema: String) -> MigrationRunner {
        MigrationRunner(
            schema: schema,
            migrations: [
                Migration(1, "create_things", ["CREATE TABLE \(schema).things (id integer PRIMARY KEY)"]),
                Migration(2, "add_name", ["ALTER TABLE \(schema).things ADD COLUMN name text"]),
            ])
    }

    @Test func migrationsApplyOnceAndInOrder() async throws {
        try await withPostgres { postgres in
            let schema = "migrations_\(UUID().uuidString.prefix(8).lowercased())"
            #expect(try await runner(schema).run(on: postgres, logger: .test) == [1, 2])
            #expect(try await runner(schema).run(on: postgres, logger: .test) == [])
            try await postgres.query(PostgresQuery(unsafeSQL: "INSERT INTO \(schema).things (id, name) VALUES (1, 'x')"))
        }
    }

    @Test func replicasStartingAtOnceApplyEachMigrationOnce() async throws {
        try await withPostgres { postgres in
            let schema = "migrations_\(UUID().uuidString.prefix(8).lowercased())"
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<6 { group.addTask { try await runner(schema).run(on: postgres, logger: .test) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(applied.sorted() == [1, 2])
            let rows = try await postgres.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(schema).schema_migrations"))
            for try await count in rows.decode(Int.self) { #expect(count == 2) }
        }
    }

    @Test func aFailingMigrationLeavesNothingBehind() async throws {
        try await withPostgres { postgres in
            let schema = "migrations_\(UUID().uuidString.prefix(8).lowercased())"
            let broken = MigrationRunner(
                schema: schema,
                migrations: [
                    Migration(1, "create_things", ["CREATE TABLE \(schema).things (id integer PRIMARY KEY)"]),
                    Migration(2, "broken", ["ALTER TABLE \(schema).nothing ADD COLUMN x text"]),
                ])
            await #expect(throws: (any Error).self) { try await broken.run(on: postgres, logger: .test) }
            // One transaction: the good first migration was rolled back with the bad second one.
            let applied = try await runner(schema).run(on: postgres, logger: .test)
            #expect(applied == [1, 2])
        }
    }

    @Test func theEmbeddedClusterSurvivesARestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let logger = Logger.test
        let first = try EmbeddedPostgres.start(directory: directory, logger: logger)
        try await Self.query(first.settings, "CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')")
        first.stop()
        let second = try EmbeddedPostgres.start(directory: directory, logger: logger)
        defer { second.stopAndRemove() }
        #expect(try await Self.query(second.settings, "SELECT value FROM kept") == "still here")
    }

    /// As root, the cluster cannot live in the private data directory, which its server's user
    /// cannot enter. One that an earlier version made there (when the directory was 0755) is moved
    /// out on the next start, with its data.
    @Test(.enabled(if: geteuid() == 0, "only root's cluster lives outside the data directory"))
    func rootsEarlierClusterInsideTheDataDirectoryIsMovedOut() async throws {
        let fileManager = FileManager.default
        let scratch = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        let directory = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        defer {
            try? fileManager.removeItem(at: scratch)
            try? fileManager.removeItem(at: directory)
        }
        let first = try EmbeddedPostgres.start(directory: scratch, logger: .test)
        defer { try? fileManager.removeItem(at: first.dataDirectory.deletingLastPathComponent()) }
        try await Self.query(first.settings, "CREATE TABLE kept (value text); INSERT INTO kept VALUES ('moved along')")
        first.stop()
        #expect(!first.dataDirectory.path.hasPrefix(scratch.path))

        // The layout of the earlier version: the cluster in <directory>/postgres, the directory open.
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        try fileManager.moveItem(at: first.dataDirectory, to: directory.appendingPathComponent("postgres"))
        try fileManager.copyItem(
            at: scratch.appendingPathComponent("postgres.password"), to: directory.appendingPathComponent("postgres.password"))

        let second = try EmbeddedPostgres.start(directory: directory, logger: .test)
        defer {
            second.stop()
            try? fileManager.removeItem(at: second.dataDirectory.deletingLastPathComponent())
        }
        #expect(try await Self.query(second.settings, "SELECT value FROM kept") == "moved along")
        #expect(!fileManager.fileExists(atPath: directory.appendingPathComponent("postgres").path))
        #expect((try fileManager.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int) == 0o700)
    }

    /// As root the cluster lives outside the data directory and outlives it. Someone who deletes
    /// the data directory (its password with it) and starts again at the same path gets a new,
    /// empty cluster, not an error, even while the old server still runs.
    @Test(.enabled(if: geteuid() == 0, "only root's cluster lives outside the data directory"))
    func aDeletedDataDirectoryStartsAfresh() async throws {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: directory) }
        let first = try EmbeddedPostgres.start(directory: directory, logger: .test)
        try await Self.query(first.settings, "CREATE TABLE gone (value text)")
        try fileManager.removeItem(at: directory)

        let second = try EmbeddedPostgres.start(directory: directory, logger: .test)
        defer { second.stopAndRemove() }
        #expect(try await Self.query(second.settings, "SELECT to_regclass('gone')::text") == nil)
    }

    /// As root a cluster outlives its data directory. One whose data directory was deleted without
    /// stopping it (a benchmark killed mid-run, a script's temporary `layer dev`) is stopped and
    /// removed by the next start of any embedded cluster, and nothing else is.
    @Test(.enabled(if: geteuid() == 0, "only root's cluster lives outside the data directory"))
    func theClusterOfADeletedDataDirectoryIsRemovedByTheNextStart() async throws {
        let fileManager = FileManager.default
        let gone = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        let kept = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        let next = fileManager.temporaryDirectory.appendingPathComponent("layer-embedded-\(UUID().uuidString)")
        let orphan = try EmbeddedPostgres.start(directory: gone, logger: .test)
        let survivor = try EmbeddedPostgres.start(directory: kept, logger: .test)
        defer { survivor.stopAndRemove() }
        let orphanPID = try #require(EmbeddedPostgres.runningPID(orphan.dataDirectory))
        try fileManager.removeItem(at: gone)

        let third = try EmbeddedPostgres.start(directory: next, logger: .test)
        defer { third.stopAndRemove() }
        #expect(kill(orphanPID, 0) != 0, "the orphan's server was stopped")
        #expect(!fileManager.fileExists(atPath: EmbeddedPostgres.serverFolder(for: gone).path))
        #expect(EmbeddedPostgres.runningPID(survivor.dataDirectory) != nil, "a cluster whose directory is there runs on")
        #expect(try await Self.query(survivor.settings, "SELECT 'alive'") == "alive")
    }

    /// Runs `sql` (statements separated by `; `) and returns the first column of the last row.
    static func query(_ settings: DatabaseSettings, _ sql: String) async throws -> String? {
        let client = settings.makeClient(logger: .test)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            var last: String?
            for statement in sql.components(separatedBy: "; ") {
                for try await row in try await client.query(PostgresQuery(unsafeSQL: statement)) {
                    last = try? row.decode(String.self)
                }
            }
            return last
        }
    }
}
