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
    /// How long one statement may run, and one transaction may sit idle, before PostgreSQL ends
    /// it: no request waits on the database beyond its own deadline (`LAYER_REQUEST_TIMEOUT_MS`).
    public var statementTimeout: Duration = .seconds(10)

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
        configuration.options.connectTimeout = .seconds(3)
        let milliseconds = String(
            statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000)
        configuration.options.additionalStartupParameters = [
            ("statement_timeout", milliseconds),
            // A transaction left open (a client that stalls mid-request) gives back its locks.
            ("idle_in_transaction_session_timeout", milliseconds),
        ]
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }
}

extension PostgresClient {
    /// Runs `body` in one transaction and returns once PostgreSQL confirmed the commit: a write
    /// is acknowledged to a client only after this returns. (A statement sent on its own commits
    /// when the whole exchange ends, after its rows came back, so a connection lost in between
    /// rolls back a write whose rows were already read.)
    ///
    /// When PostgreSQL aborts the transaction to break a deadlock or a serialization conflict, or
    /// the connection is lost before the commit was sent (a restarted server), nothing of it
    /// stays and it runs again on another connection (three attempts in all), so `body` must do
    /// nothing but its SQL. A connection lost during the commit leaves the outcome unknown: that
    /// error is thrown, and the client, told the service is unavailable, retries with its own id.
    /// Errors thrown by `body` come out as they were thrown, not wrapped, so an ``APIError``
    /// raised inside still reaches the client.
    public func transaction<Result: Sendable>(
        logger: Logger, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        var attempt = 1
        while true {
            do {
                return try await withTransaction(logger: logger) { connection in try await body(connection) }
            } catch let error as PostgresTransactionError {
                let cause = error.commitError ?? error.beginError ?? error.closureError
                let retryable =
                    error.commitError == nil
                    && ((cause as? PSQLError)?.isTransactionConflict == true || DatabaseFailure.isConnectionLoss(cause))
                if retryable, attempt < 3 {
                    logger.debug(
                        "Running a transaction again",
                        metadata: ["attempt": "\(attempt + 1)", "cause": "\(cause.map { String(reflecting: $0) } ?? "-")"])
                    try await Task.sleep(for: .milliseconds(100 * attempt * attempt))
                    attempt += 1
                    continue
                }
                if let cause { throw cause }
                throw error
            }
        }
    }

    /// One statement that writes, in a transaction of its own: its rows, once the commit is
    /// confirmed. See ``transaction(logger:_:)``.
    @discardableResult
    public func write(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await transaction(logger: logger) { connection in
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }
}

extension Array where Element == PostgresRow {
    /// Every row decoded as `type`.
    public func decode<T: PostgresDecodable>(_ type: T.Type) throws -> [T] {
        try map { try $0.decode(T.self) }
    }

}

/// How a database failure is told apart from a bug: PostgreSQL unreachable, restarting, out of
/// connections or too slow is a 503 the client may retry, never a 500.
public enum DatabaseFailure {
    /// The connection went away under the query: a server shut down or restarted, a network cut.
    public static func isConnectionLoss(_ error: (any Error)?) -> Bool {
        guard let error else { return false }
        if let transaction = error as? PostgresTransactionError {
            return isConnectionLoss(transaction.commitError ?? transaction.beginError ?? transaction.closureError)
        }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            return true
        default:
            // 08: connection exception; 57P01-57P03: administrator or crash shutdown, starting up.
            guard let state = error.sqlState else { return false }
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        }
    }

    /// The database cannot serve this request now, though it may in a moment.
    public static func isUnavailable(_ error: any Error) -> Bool {
        if isConnectionLoss(error) { return true }
        if let transaction = error as? PostgresTransactionError {
            guard let cause = transaction.commitError ?? transaction.beginError ?? transaction.closureError else { return false }
            return isUnavailable(cause)
        }
        guard let error = error as? PSQLError else { return false }
        if error.code == .poolClosed || error.code == .queryCancelled { return true }
        guard let state = error.sqlState else { return false }
        // 53: out of resources (too many connections); 57014: statement timeout; 25P03: idle in
        // transaction timeout; 40P01/40001: a conflict that persisted through the retries.
        return state.hasPrefix("53") || ["57014", "25P03", "40P01", "40001"].contains(state)
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

    /// One statement that writes, committed before its rows come back.
    @discardableResult
    public func write(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await postgres.write(query, logger: logger)
    }

    /// Runs `body` on a pooled connection; run again once on another when the connection turns
    /// out to be lost (a restarted server), so `body` must only read.
    public func read<T: Sendable>(logger: Logger, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await postgres.withConnection { connection in try await body(connection) }
        } catch  where DatabaseFailure.isConnectionLoss(error) {
            return try await postgres.withConnection { connection in try await body(connection) }
        }
    }
}

extension PSQLError {
    /// The SQLSTATE of a server error, such as `23505` for a unique violation.
    public var sqlState: String? { serverInfo?[.sqlState] }

    /// A deadlock or serialization failure: the transaction was rolled back and may be run again.
    var isTransactionConflict: Bool { ["40P01", "40001"].contains(sqlState ?? "") }
}

extension PostgresBindings {
    /// A value, or NULL for none: an optional filter of a query that is written once.
    public mutating func appendOptional(_ value: (some PostgresNonThrowingEncodable)?) {
        if let value { append(value) } else { appendNull() }
    }
}
