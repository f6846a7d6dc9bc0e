import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The likely duplicate pairs of an app's persons (computed by ``PersonLinker``).
enum MatchRepository {
    /// Every kept match of `persons` at or above `minProbability`, most likely first.
    static func matches(
        app: UUID, involving persons: [UUID], minProbability: Double, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [JSONValue] {
        guard !persons.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT id, a, b, probability, evidence::text FROM names.matches
            WHERE app_id = \(app) AND (a = ANY(\(persons)) OR b = ANY(\(persons))) AND probability >= \(minProbability)
            ORDER BY probability DESC, id
            """, logger: logger)
        return try await render(rows)
    }

    /// The kept matches of `persons` at or above `minProbability`, as pairs of persons.
    static func pairs(
        app: UUID, involving persons: [UUID], minProbability: Double, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [(id: UUID, a: UUID, b: UUID)] {
        guard !persons.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT id, a, b FROM names.matches
            WHERE app_id = \(app) AND (a = ANY(\(persons)) OR b = ANY(\(persons))) AND probability >= \(minProbability)
            """, logger: logger)
        var result: [(id: UUID, a: UUID, b: UUID)] = []
        for try await (id, a, b) in rows.decode((UUID, UUID, UUID).self) { result.append((id, a, b)) }
        return result
    }

    /// One page of an app's matches at or above `minProbability`, most likely first, after the
    /// match `from` (in that order); and how many there are in all.
    static func page(
        app: UUID, minProbability: Double, pageSize: Int, from: UUID?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (items: [JSONValue], total: Int) {
        var after: (probability: Double, id: UUID)?
        if let from {
            let rows = try await connection.query(
                "SELECT probability FROM names.matches WHERE app_id = \(app) AND id = \(from)", logger: logger)
            for try await probability in rows.decode(Double.self) { after = (probability, from) }
            guard after != nil else { throw APIError.invalid("from_id", "from_id is not a match of this app.") }
        }
        let rows: PostgresRowSequence
        if let after {
            rows = try await connection.query(
                """
                SELECT id, a, b, probability, evidence::text FROM names.matches
                WHERE app_id = \(app) AND probability >= \(minProbability)
                  AND (probability < \(after.probability) OR (probability = \(after.probability) AND id > \(after.id)))
                ORDER BY probability DESC, id LIMIT \(pageSize)
                """, logger: logger)
        } else {
            rows = try await connection.query(
                """
                SELECT id, a, b, probability, evidence::text FROM names.matches
                WHERE app_id = \(app) AND probability >= \(minProbability)
                ORDER BY probability DESC, id LIMIT \(pageSize)
                """, logger: logger)
        }
        let items = try await render(rows)
        let counted = try await connection.query(
            "SELECT count(*) FROM names.matches WHERE app_id = \(app) AND probability >= \(minProbability)", logger: logger)
        var total: Int64 = 0
        for try await count in counted.decode(Int64.self) { total = count }
        return (items, Int(total))
    }

    private static func render(_ rows: PostgresRowSequence) async throws -> [JSONValue] {
        var result: [JSONValue] = []
        let decoder = JSONDecoder()
        for try await (id, a, b, probability, evidence) in rows.decode((UUID, UUID, UUID, Double, String).self) {
            result.append(
                MatchObject.render(
                    id: id, members: [LayerID(.persons, a).uri, LayerID(.persons, b).uri], probability: probability,
                    evidence: try decoder.decode([String: String].self, from: Data(evidence.utf8))))
        }
        return result
    }
}

/// Per-app settings of the service.
struct SettingsRepository: PostgresRepository {
    let postgres: PostgresClient

    func region(app: UUID, logger: Logger) async throws -> String? {
        let rows = try await postgres.query(
            "SELECT default_region FROM names.app_settings WHERE app_id = \(app)", logger: logger)
        for try await region in rows.decode(String.self) { return region }
        return nil
    }

    func setRegion(app: UUID, region: String, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO names.app_settings (app_id, default_region) VALUES (\(app), \(region))
            ON CONFLICT (app_id) DO UPDATE SET default_region = excluded.default_region, updated_at = now()
            """, logger: logger)
    }
}
