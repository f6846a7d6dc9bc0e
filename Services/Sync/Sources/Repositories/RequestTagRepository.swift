import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The `If-None-Match` tags of Server API creates (`sync.request_tags`), and the rows they lead to.
struct RequestTagRepository: PostgresRepository {
    let postgres: PostgresClient

    /// Records `candidate` as the resource of `tag` unless the tag has one already, and returns
    /// the tag's resource. Committed at once, before the create it stands for.
    func reserve(_ tag: UUID, app: UUID, candidate: String, logger: Logger) async throws -> String {
        // Two transactions: after waiting on a concurrent insert of the same tag, the second
        // one's fresh snapshot sees the row that won.
        try await write(
            """
            INSERT INTO sync.request_tags (app_id, tag, resource) VALUES (\(app), \(tag), \(candidate))
            ON CONFLICT (app_id, tag) DO NOTHING
            """, logger: logger)
        let rows = try await postgres.query(
            "SELECT resource FROM sync.request_tags WHERE app_id = \(app) AND tag = \(tag)", logger: logger)
        for try await resource in rows.decode(String.self) { return resource }
        return candidate
    }

    /// Whether a row of the resource exists, deleted or not (a deleted one is not made again).
    func resourceExists(_ id: LayerID, app: UUID, logger: Logger) async throws -> Bool {
        let table: String
        switch id.collection {
        case .conversations: table = "sync.conversations"
        case .messages: table = "sync.messages"
        case .announcements: table = "sync.announcements"
        default: return false
        }
        let rows = try await postgres.query(
            "SELECT 1 FROM \(unescaped: table) WHERE app_id = \(app) AND id = \(id.uuid)", logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
