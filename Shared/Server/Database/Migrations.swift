import Logging
import PostgresNIO

/// One step of a service's schema. Migrations are numbered, listed in one ordered array per
/// service, and never edited once released: a change is a new migration.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let statements: [String]

    public init(_ version: Int, _ name: String, _ statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }
}

/// Applies a service's migrations to its own schema at start. An advisory lock per schema makes
/// replicas that start at once take turns, and each migration commits with its bookkeeping row.
public struct MigrationRunner: Sendable {
    public let schema: String
    public let migrations: [Migration]

    public init(schema: String, migrations: [Migration]) {
        precondition(
            schema.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }, "schema names are plain identifiers")
        precondition(
            zip(migrations, migrations.dropFirst()).allSatisfy { $0.version < $1.version },
            "migrations must be listed in increasing version order")
        self.schema = schema
        self.migrations = migrations
    }

    /// Applies what is missing; returns the versions it applied.
    @discardableResult
    public func run(on client: PostgresClient, logger: Logger) async throws -> [Int] {
        let lockKey = "layerline.migrations.\(schema)"
        return try await client.transaction(logger: logger) { connection in
            // Migrations may rebuild large tables: the per-request statement limit does not apply.
            try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(lockKey)))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(schema)"), logger: logger)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TABLE IF NOT EXISTS \(schema).schema_migrations (
                            version integer PRIMARY KEY,
                            name text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now())
                        """), logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT version FROM \(schema).schema_migrations"), logger: logger
            ).decode(Int.self) {
                applied.insert(version)
            }
            var newlyApplied: [Int] = []
            for migration in migrations where !applied.contains(migration.version) {
                logger.info("Applying migration", metadata: ["schema": "\(schema)", "migration": "\(migration.name)"])
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "INSERT INTO \(schema).schema_migrations (version, name) VALUES ($1, $2)",
                        binds: try Self.binds(migration.version, migration.name)), logger: logger)
                newlyApplied.append(migration.version)
            }
            return newlyApplied
        }
    }

    private static func binds(_ version: Int, _ name: String) throws -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(version)
        binds.append(name)
        return binds
    }
}
