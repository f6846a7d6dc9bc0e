import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import PostgresNIO

/// A row of `sync.content`: an upload slot, and once its bytes arrived, a stored payload.
struct ContentRecord: Sendable {
    var appID: UUID
    var id: UUID
    var ownerID: String
    var contentType: String
    var declaredSize: Int64
    /// The stored size; nil until the upload completed.
    var size: Int64?
    var uploadedAt: Date?

    var isUploaded: Bool { uploadedAt != nil }

    static let columns = "c.app_id, c.id, c.owner_id, c.content_type, c.declared_size, c.size, c.uploaded_at"

    init(row: PostgresRow) throws {
        (appID, id, ownerID, contentType, declaredSize, size, uploadedAt) = try row.decode(
            (UUID, UUID, String, String, Int64, Int64?, Date?).self)
    }
}

/// Rich content: upload slots, the streamed upload into rows of at most ``contentChunkSize``
/// bytes, who may see a payload, and reading it back one row at a time.
struct ContentRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The largest row of `sync.content_chunks`. Neither an upload nor a download holds more
    /// than about one of these in memory.
    static let contentChunkSize = 256 * 1024

    /// Opens an upload slot owned by `owner` for `declaredSize` bytes of `contentType`.
    func createContent(
        app: UUID, owner: String, contentType: String, declaredSize: Int64, logger: Logger
    ) async throws -> ContentRecord {
        let id = UUID()
        let rows = try await postgres.query(
            """
            INSERT INTO sync.content AS c (app_id, id, owner_id, content_type, declared_size)
            VALUES (\(app), \(id), \(owner), \(contentType), \(declaredSize))
            RETURNING \(unescaped: ContentRecord.columns)
            """, logger: logger)
        for try await row in rows { return try ContentRecord(row: row) }
        throw APIError(.internalServerError, "The content row was not created.")
    }

    /// The content with this id, whatever its app (the signed routes carry no session); nil if none.
    func content(id: UUID, logger: Logger) async throws -> ContentRecord? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: ContentRecord.columns) FROM sync.content c WHERE c.id = \(id)", logger: logger)
        for try await row in rows { return try ContentRecord(row: row) }
        return nil
    }

    /// The uploaded content `viewer` may see: their own, or content that a message they can see
    /// still refers to (within their visible history of a conversation they are in). Anything
    /// else, and content whose bytes never arrived, is 404.
    func visibleContent(app: UUID, id: UUID, viewer: String, logger: Logger) async throws -> ContentRecord {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: ContentRecord.columns) FROM sync.content c
            WHERE c.app_id = \(app) AND c.id = \(id) AND (c.owner_id = \(viewer) OR EXISTS (
                SELECT 1 FROM sync.message_content mc
                JOIN sync.messages m ON m.id = mc.message_id
                JOIN sync.conversations cv ON cv.id = m.conversation_id AND cv.deleted_at IS NULL
                JOIN sync.participants p ON p.conversation_id = m.conversation_id AND p.user_id = \(viewer)
                WHERE mc.content_id = c.id AND mc.app_id = c.app_id AND \(unescaped: messageVisibleToParticipant)
                    AND EXISTS (SELECT 1 FROM jsonb_array_elements(m.parts) e
                                WHERE (e->>'content_id')::uuid = c.id)))
            """, logger: logger)
        var found: ContentRecord?
        for try await row in rows { found = try ContentRecord(row: row) }
        guard let found else { throw APIError.notFound("The content") }
        guard found.isUploaded else {
            throw APIError(.notFound, "The content has not been uploaded yet.")
        }
        return found
    }

    /// Stores the bytes of `body` as the payload of content `id`, in one transaction: the rows are
    /// written as the bytes arrive, and the payload only counts once exactly the declared number
    /// arrived. More bytes than declared stop the reading at once (413); fewer are refused (422);
    /// either way nothing stays. Content uploaded before, or being uploaded by another request
    /// right now, is refused with `invalid_operation`.
    func storeUpload<Bytes: AsyncSequence & Sendable>(
        content id: UUID, body: Bytes, logger: Logger
    ) async throws -> ContentRecord where Bytes.Element == ByteBuffer {
        do {
            return try await postgres.transaction(logger: logger) { connection in
                // NOWAIT: a second upload of the same slot fails at once instead of queueing
                // behind a transfer that may take minutes.
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: ContentRecord.columns) FROM sync.content c WHERE c.id = \(id) FOR UPDATE NOWAIT
                    """, logger: logger)
                var found: ContentRecord?
                for try await row in rows { found = try ContentRecord(row: row) }
                guard var record = found else { throw APIError.notFound("The content") }
                guard !record.isUploaded else {
                    throw APIError(.invalidOperation, "This content was uploaded already; content cannot be replaced.")
                }
                let received = try await writeChunks(of: body, content: id, limit: record.declaredSize, connection, logger)
                guard received == record.declaredSize else {
                    throw Self.lengthMismatch(declared: record.declaredSize, received: received)
                }
                let updated = try await connection.query(
                    """
                    UPDATE sync.content SET size = \(received), uploaded_at = now() WHERE id = \(id)
                    RETURNING uploaded_at
                    """, logger: logger)
                for try await uploadedAt in updated.decode(Date.self) { record.uploadedAt = uploadedAt }
                record.size = received
                return record
            }
        } catch let error as PSQLError where error.sqlState == "55P03" {
            throw APIError(.invalidOperation, "This content is being uploaded by another request.")
        }
    }

    /// Writes the bytes of `body` to rows of `content_chunks`, each full but the last, and
    /// answers how many bytes there were. Past `limit` it stops reading and throws 413.
    private func writeChunks<Bytes: AsyncSequence>(
        of body: Bytes, content id: UUID, limit: Int64, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Int64 where Bytes.Element == ByteBuffer {
        let chunkSize = Self.contentChunkSize
        var pending = ByteBuffer()
        pending.reserveCapacity(min(chunkSize, Int(clamping: limit)))
        var ordinal: Int32 = 0
        var received: Int64 = 0

        func flush() async throws {
            guard pending.readableBytes > 0 else { return }
            try await connection.query(
                "INSERT INTO sync.content_chunks (content_id, ordinal, data) VALUES (\(id), \(ordinal), \(pending))",
                logger: logger)
            ordinal += 1
            pending.clear()
        }

        for try await var buffer in body {
            received += Int64(buffer.readableBytes)
            guard received <= limit else {
                throw Self.lengthMismatch(declared: limit, received: received)
            }
            while buffer.readableBytes > 0 {
                var piece = buffer.readSlice(length: min(buffer.readableBytes, chunkSize - pending.readableBytes))!
                pending.writeBuffer(&piece)
                if pending.readableBytes == chunkSize { try await flush() }
            }
        }
        try await flush()
        return received
    }

    /// The error for an upload whose length differs from the declared one; `received` is a lower
    /// bound when there were more bytes, since reading stops there.
    static func lengthMismatch(declared: Int64, received: Int64) -> APIError {
        if received > declared {
            return APIError(
                .requestTooLarge, "The upload is longer than the \(declared) bytes declared in Upload-Content-Length.",
                property: "Upload-Content-Length", extra: ["declared": .number(Double(declared))])
        }
        return APIError(
            .invalidProperty, "The upload has \(received) bytes, but Upload-Content-Length declared \(declared).",
            property: "Upload-Content-Length",
            extra: ["declared": .number(Double(declared)), "received": .number(Double(received))])
    }

    /// One stored row of a payload, or nil past its end.
    func contentChunk(content id: UUID, ordinal: Int32, logger: Logger) async throws -> ByteBuffer? {
        let rows = try await postgres.query(
            "SELECT data FROM sync.content_chunks WHERE content_id = \(id) AND ordinal = \(ordinal)", logger: logger)
        for try await data in rows.decode(ByteBuffer.self) { return data }
        return nil
    }

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
