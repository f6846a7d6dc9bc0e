import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// De-duplication of Server API creates with `If-None-Match: <uuid>`.
///
/// The first request with a tag reserves an id for the resource it is about to create and
/// records it under the tag (committed at once, in `sync.request_tags`); the create then uses
/// that id. A repeat of the tag finds the recorded id: if the resource exists, it is answered
/// with it and nothing is executed; if not (the first request failed, or is still running, or
/// the process stopped in between), the create runs again under the same id, and the store's
/// own uniqueness on that id makes sure only one resource ever comes of it.
struct RequestTag: Sendable {
    let tag: UUID
    /// The id reserved for the resource of this tag.
    let resource: UUID

    /// The tag of a request, nil without `If-None-Match`. A tag is a UUID, optionally quoted as
    /// an entity tag (`"…"`); anything else is a 400 naming the header.
    static func read(_ request: Request) throws -> UUID? {
        guard let raw = request.headers[.ifNoneMatch] else { return nil }
        var text = raw.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        guard let tag = UUID(uuidString: text) else {
            throw APIError(
                .invalidRequest, "If-None-Match is a request tag: a UUID such as \(UUID().lowercased).",
                data: ["header": "If-None-Match"])
        }
        return tag
    }

    /// Reserves `tag` for a new resource of `collection`, or finds what an earlier request with
    /// it reserved. A tag used before for another kind of resource is a 400.
    static func reserve(
        _ tag: UUID, app: UUID, collection: LayerID.Collection, store: SyncStore, logger: Logger
    ) async throws -> RequestTag {
        let candidate = LayerID(collection, UUID()).uri
        let recorded = try await store.postgres.withConnection { connection in
            // Two statements: after waiting on a concurrent insert of the same tag, the second
            // one's fresh snapshot sees the row that won.
            try await connection.query(
                """
                INSERT INTO sync.request_tags (app_id, tag, resource) VALUES (\(app), \(tag), \(candidate))
                ON CONFLICT (app_id, tag) DO NOTHING
                """, logger: logger)
            let rows = try await connection.query(
                "SELECT resource FROM sync.request_tags WHERE app_id = \(app) AND tag = \(tag)", logger: logger)
            for try await resource in rows.decode(String.self) { return resource }
            return candidate
        }
        guard let id = LayerID(parsing: recorded, as: collection) else {
            throw APIError(
                .invalidRequest, "This If-None-Match tag was used before for another kind of request.",
                data: ["header": "If-None-Match"])
        }
        return RequestTag(tag: tag, resource: id.uuid)
    }
}

extension SyncStore {
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
