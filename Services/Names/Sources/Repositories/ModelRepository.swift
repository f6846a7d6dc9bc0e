import Foundation
import Logging
import NameMatching
import PostgresNIO

/// Each app's own match model and the sample of its store it is estimated on.
enum ModelRepository {
    /// The app's model and the number of persons its store had when it was estimated; `nil` before
    /// the first estimate, or for a model stored by a version whose factors differ.
    static func model(app: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> (model: MatchModel, persons: Int)?
    {
        let rows = try await connection.query(
            "SELECT persons, model::text FROM names.app_models WHERE app_id = \(app)", logger: logger)
        for try await (persons, text) in rows.decode((Int32, String).self) {
            guard let model = try? JSONDecoder().decode(MatchModel.self, from: Data(text.utf8)) else { return nil }
            return (model, Int(persons))
        }
        return nil
    }

    static func save(app: UUID, model: MatchModel, persons: Int, _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        let text = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        try await connection.query(
            """
            INSERT INTO names.app_models (app_id, persons, model) VALUES (\(app), \(Int32(clamping: persons)), \(text)::jsonb)
            ON CONFLICT (app_id) DO UPDATE SET persons = excluded.persons, model = excluded.model, estimated_at = now()
            """, logger: logger)
    }

    /// Up to `limit` of the app's persons and their stored features. Person ids are random, so the
    /// first ones in id order are a random sample, read through the primary key.
    static func sample(app: UUID, limit: Int, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> [(id: UUID, features: String)]
    {
        let rows = try await connection.query(
            "SELECT id, features::text FROM names.persons WHERE app_id = \(app) ORDER BY id LIMIT \(limit)", logger: logger)
        var result: [(id: UUID, features: String)] = []
        for try await (id, text) in rows.decode((UUID, String).self) { result.append((id, text)) }
        return result
    }
}
