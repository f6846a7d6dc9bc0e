import Foundation
import Logging
import PostgresNIO

/// How to reach PostgreSQL, parsed from a `postgres://user:password@host:port/database` URL.
public struct DatabaseSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var requireTLS: Bool
    public var maxConnections: Int

    public init(
        host: String, port: Int, username: String, password: String?, database: String,
        requireTLS: Bool = false, maxConnections: Int = 20
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.requireTLS = requireTLS
        self.maxConnections = maxConnections
    }

    public init?(url: String, maxConnections: Int = 20) {
        guard let components = URLComponents(string: url),
            ["postgres", "postgresql"].contains(components.scheme ?? ""),
            let host = components.host, !host.isEmpty
        else { return nil }
        let database = String(components.path.drop { $0 == "/" })
        let sslmode = components.queryItems?.first { $0.name == "sslmode" }?.value
        self.init(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password?.removingPercentEncoding,
            database: database.isEmpty ? (components.user ?? "postgres") : database,
            requireTLS: ["require", "verify-ca", "verify-full"].contains(sslmode ?? ""),
            maxConnections: maxConnections)
    }

    public var url: String {
        let credentials = password.map { "\(username):\($0)" } ?? username
        return "postgres://\(credentials)@\(host):\(port)/\(database)"
    }

    public func makeClient(logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database,
            tls: requireTLS ? .require(.makeClientConfiguration()) : .disable)
        configuration.options.maximumConnections = maxConnections
        configuration.options.minimumConnections = 0
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}

extension PostgresClient {
    /// Runs `body` in one transaction. When PostgreSQL aborts it to break a deadlock or a
    /// serialization conflict with another writer, nothing of it stays, and it runs again (three
    /// attempts in all), so `body` must do nothing but its SQL. Errors thrown by `body` come out as
    /// they were thrown, not wrapped, so an ``APIError`` raised inside still reaches the client.
    public func transaction<Result: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await withTransaction(logger: logger) { connection in try await body(connection) }
            } catch let error as PostgresTransactionError {
                if let closureError = error.closureError {
                    if let conflict = closureError as? PSQLError, conflict.isTransactionConflict, attempt < 3 {
                        attempt += 1
                        logger.debug("Retrying a transaction after a conflict", metadata: ["attempt": "\(attempt)"])
                        continue
                    }
                    throw closureError
                }
                throw error
            }
        }
    }
}

extension PostgresClient {
    /// `NOTIFY channel, payload`: delivered to every listener once the statement commits.
    public func notify(_ channel: String, payload: String, logger: Logger) async throws {
        try await query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
    }
}

/// A repository: the SQL of one aggregate of a service, over the pool.
public protocol PostgresRepository: Sendable {
    var postgres: PostgresClient { get }
}

extension PostgresRepository {
    /// Runs `body` in a transaction (run again after a deadlock; see `PostgresClient.transaction`).
    public func write<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await postgres.transaction(logger: logger, body)
    }

    public func read<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await postgres.withConnection { connection in try await body(connection) }
    }
}

extension PSQLError {
    /// The SQLSTATE of a server error, such as `23505` for a unique violation.
    public var sqlState: String? { serverInfo?[.sqlState] }

    /// A deadlock or serialization failure: the transaction was rolled back and may be run again.
    var isTransactionConflict: Bool { ["40P01", "40001"].contains(sqlState ?? "") }
}
