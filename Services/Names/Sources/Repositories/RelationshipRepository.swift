import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The communication graph of an app: who messaged or called whom, by user id, and how often.
struct RelationshipRepository: PostgresRepository {
    let postgres: PostgresClient

    /// Adds one reported batch: each pair of users once per event, either way round; the number
    /// of pairs it touched.
    @discardableResult
    func record(app: UUID, _ events: [InternalAPI.Relationships.Event], logger: Logger) async throws -> Int {
        var lows: [String] = []
        var highs: [String] = []
        var messages: [Int64] = []
        var calls: [Int64] = []
        var totals: [String: (Int64, Int64)] = [:]
        for event in events {
            for other in Set(event.to) where other != event.from {
                let key = event.from < other ? "\(event.from)\u{0}\(other)" : "\(other)\u{0}\(event.from)"
                var total = totals[key] ?? (0, 0)
                if event.kind == .call { total.1 += 1 } else { total.0 += 1 }
                totals[key] = total
            }
        }
        guard !totals.isEmpty else { return 0 }
        for (key, total) in totals.sorted(by: { $0.key < $1.key }) {
            let users = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
            lows.append(String(users[0]))
            highs.append(String(users[1]))
            messages.append(total.0)
            calls.append(total.1)
        }
        try await write(
            """
            INSERT INTO names.relationships (app_id, a, b, messages, calls)
            SELECT \(app), u.* FROM unnest(\(lows)::text[], \(highs)::text[], \(messages)::bigint[], \(calls)::bigint[]) AS u
            ON CONFLICT (app_id, a, b) DO UPDATE SET messages = names.relationships.messages + excluded.messages,
                calls = names.relationships.calls + excluded.calls, last_at = now()
            """, logger: logger)
        return totals.count
    }

    /// How strongly `user` is tied to each of `others`: messages and calls between them.
    func strength(app: UUID, user: String, others: [String], logger: Logger) async throws -> [String: Int64] {
        guard !others.isEmpty else { return [:] }
        let rows = try await postgres.query(
            """
            SELECT CASE WHEN a = \(user) THEN b ELSE a END, messages + calls FROM names.relationships
            WHERE app_id = \(app) AND ((a = \(user) AND b = ANY(\(others))) OR (b = \(user) AND a = ANY(\(others))))
            """, logger: logger)
        var result: [String: Int64] = [:]
        for try await (other, count) in rows.decode((String, Int64).self) { result[other] = count }
        return result
    }
}
