import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

extension SyncStore {
    /// Checks the rich content that parts refer to: it exists in this app, its bytes were
    /// uploaded, it belongs to the sender (any content of the app for a system sender), and a
    /// declared size matches. The parts come back with the stored size.
    func resolveContent(app: UUID, owner: String?, parts: ValidatedParts, logger: Logger) async throws -> ValidatedParts {
        let ids = parts.contentIDs
        guard !ids.isEmpty else { return parts }
        let rows = try await postgres.query(
            """
            SELECT id, owner_id, size FROM sync.content
            WHERE app_id = \(app) AND id = ANY(\(ids)) AND uploaded_at IS NOT NULL
            """, logger: logger)
        var sizes: [UUID: Int64] = [:]
        for try await (id, contentOwner, size) in rows.decode((UUID, String, Int64?).self) {
            if owner == nil || owner == contentOwner, let size { sizes[id] = size }
        }
        var resolved = parts
        for index in resolved.parts.indices {
            guard let contentID = resolved.parts[index].contentID else { continue }
            let property = "parts.\(index).content"
            guard let size = sizes[contentID] else {
                throw APIError.invalid("\(property).id", "No uploaded content of yours has the id \(contentID.lowercased).")
            }
            if let declared = resolved.parts[index].size, declared != size {
                throw APIError.invalid("\(property).size", "The content has \(size) bytes, not \(declared).")
            }
            resolved.parts[index].size = size
        }
        return resolved
    }
}
