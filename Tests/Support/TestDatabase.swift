import Foundation
import LayerServer
import Logging
import PostgresNIO

/// The PostgreSQL the tests run against: `LAYER_TEST_DATABASE_URL` (or `LAYER_DATABASE_URL`) when
/// set, otherwise a private cluster this process starts once, exactly as `layer dev` does, and
/// removes after the process exits. Tests share it and keep apart by using their own apps.
public enum TestDatabase {
    private static let started = Task<DatabaseSettings, any Error> {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["LAYER_TEST_DATABASE_URL"] ?? environment["LAYER_DATABASE_URL"] {
            guard let settings = DatabaseSettings(url: url, maxConnections: 8) else {
                throw SettingsError(service: "tests", problems: ["the test database URL is not a postgres:// URL"])
            }
            return settings
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("layerline-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        // Every test serves on a pool of its own, many at once: more connections than a server needs.
        let postgres = try EmbeddedPostgres.start(
            directory: directory, maxConnections: 1000, logger: Logger(label: "test-postgres"))
        try postgres.stopAndRemoveAfterExit(of: getpid())
        var settings = postgres.settings
        settings.maxConnections = 8
        return settings
    }

    public static func settings() async throws -> DatabaseSettings {
        try await started.value
    }

    /// A database of its own on the same server, for a test that counts rows no app owns (the
    /// device certificates) and so must not see what tests running beside it write. It is not
    /// dropped: the private cluster goes with the test process (on a server named by
    /// LAYER_TEST_DATABASE_URL, they stay until the operator drops them).
    public static func isolated() async throws -> DatabaseSettings {
        var settings = try await self.settings()
        let name = "isolated_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let client = settings.makeClient(logger: .test)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await client.run() }
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: .test)
            group.cancelAll()
        }
        settings.database = name
        return settings
    }
}
