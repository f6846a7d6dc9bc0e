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
    /// The conversation of content that the app's backend opened through the Server API.
    var conversationID: UUID?
    /// The web origin the upload was opened for (`Upload-Origin`), whose pages may use its
    /// signed URLs from the browser.
    var uploadOrigin: String?

    var isUploaded: Bool { uploadedAt != nil }

    /// Whose uploads in progress an upload of this slot counts with: a user's, or the app's
    /// backend's for the slot's conversation.
    var uploader: String { "\(appID)/\(ownerID)/\(conversationID?.lowercased ?? "")" }

    /// The owner of content opened by the app's backend (no user id is empty).
    static let appOwner = ""

    static let columns =
        "c.app_id, c.id, c.owner_id, c.content_type, c.declared_size, c.size, c.uploaded_at, c.conversation_id, c.upload_origin"

    init(row: PostgresRow) throws {
        (appID, id, ownerID, contentType, declaredSize, size, uploadedAt, conversationID, uploadOrigin) = try row.decode(
            (UUID, UUID, String, String, Int64, Int64?, Date?, UUID?, String?).self)
    }
}

/// Rich content: upload slots, the streamed upload into rows of at most ``contentChunkSize``
/// bytes, who may see a payload, and reading it back one row at a time.
struct ContentRepository: PostgresRepository {
    let postgres: PostgresClient

    /// The largest row of `sync.content_chunks`. Neither an upload nor a download holds more
    /// than about one of these in memory.
    static let contentChunkSize = 256 * 1024

    /// Opens an upload slot owned by `owner` for `declaredSize` bytes of `contentType`, unless the
    /// owner's content (stored, and slots still open) would then take more than `quota` bytes.
    /// Content of the app's backend (``ContentRecord/appOwner``) belongs to `conversation`.
    func createContent(
        app: UUID, owner: String, conversation: UUID? = nil, contentType: String, declaredSize: Int64,
        uploadOrigin: String? = nil, quota: Int64, logger: Logger
    ) async throws -> ContentRecord {
        let id = UUID()
        return try await write(logger: logger) { connection in
            // One owner's slots are opened one at a time, so two at once cannot both fit the quota.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\(app.uuidString) || '/' || \(owner)))", logger: logger)
            let usage = try await connection.query(
                """
                SELECT coalesce(sum(coalesce(size, declared_size)), 0)::bigint FROM sync.content
                WHERE app_id = \(app) AND owner_id = \(owner)
                """, logger: logger)
            var used: Int64 = 0
            for try await total in usage.decode(Int64.self) { used = total }
            guard used + declaredSize <= quota else {
                throw APIError(
                    .requestTooLarge,
                    "Your content would take \(used + declaredSize) bytes, over the \(quota) bytes each user may store.",
                    property: "Upload-Content-Length",
                    extra: ["quota_bytes": .number(Double(quota)), "used_bytes": .number(Double(used))])
            }
            let rows = try await connection.query(
                """
                INSERT INTO sync.content AS c (
                    app_id, id, owner_id, conversation_id, content_type, declared_size, upload_origin)
                VALUES (\(app), \(id), \(owner), \(conversation), \(contentType), \(declaredSize), \(uploadOrigin))
                RETURNING \(unescaped: ContentRecord.columns)
                """, logger: logger)
            for try await row in rows { return try ContentRecord(row: row) }
            throw APIError(.internalServerError, "The content row was not created.")
        }
    }

    /// The content with this id, whatever its app (the signed routes carry no session); nil if none.
    func content(id: UUID, logger: Logger) async throws -> ContentRecord? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: ContentRecord.columns) FROM sync.content c WHERE c.id = \(id)", logger: logger)
        for try await row in rows { return try ContentRecord(row: row) }
        return nil
    }

    /// The uploaded content `viewer` may see: their own, or content that a message they can see
    /// still refers to (within their visible history of a conversation they are in, or in a
    /// channel they are a member of). Anything
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
                                WHERE (e->>'content_id')::uuid = c.id))
            OR EXISTS (
                SELECT 1 FROM sync.message_content mc
                JOIN sync.messages m ON m.id = mc.message_id AND m.deleted_at IS NULL
                JOIN sync.channels ch ON ch.id = m.channel_id AND ch.deleted_at IS NULL
                JOIN sync.channel_members cm ON cm.channel_id = m.channel_id AND cm.user_id = \(viewer)
                WHERE mc.content_id = c.id AND mc.app_id = c.app_id
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

    /// Uploaded content of `conversation` as the app's backend sees it: what it opened for that
    /// conversation, or what a message of it refers to. Anything else (another conversation's,
    /// another app's), and content whose bytes never arrived, is 404.
    func conversationContent(app: UUID, conversation: UUID, id: UUID, logger: Logger) async throws -> ContentRecord {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: ContentRecord.columns) FROM sync.content c
            JOIN sync.conversations cv ON cv.app_id = c.app_id AND cv.id = \(conversation) AND cv.deleted_at IS NULL
            WHERE c.app_id = \(app) AND c.id = \(id) AND (
                (c.owner_id = \(ContentRecord.appOwner) AND c.conversation_id = \(conversation))
                OR EXISTS (
                    SELECT 1 FROM sync.message_content mc
                    JOIN sync.messages m ON m.id = mc.message_id AND m.deleted_at IS NULL
                    WHERE mc.content_id = c.id AND mc.app_id = c.app_id AND mc.conversation_id = \(conversation)
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

    /// How long a claimed upload may go without writing a chunk before another request may take
    /// the slot over (its process died, or its client went away without the connection closing).
    static let staleClaim = "5 minutes"

    /// Stores the bytes of `body` as the payload of content `id`. No transaction stays open while
    /// the bytes arrive, however slowly: a short one claims the slot, each chunk is written on
    /// its own (and renews the claim), and a short one completes the upload once exactly the
    /// declared number of bytes arrived. More bytes than declared stop the reading at once (413);
    /// fewer are refused (422); either way the chunks are removed and the slot is free again.
    /// Content uploaded before, or being uploaded by another request right now, is refused with
    /// `invalid_operation`.
    func storeUpload<Bytes: AsyncSequence & Sendable>(
        content id: UUID, body: Bytes, logger: Logger
    ) async throws -> ContentRecord where Bytes.Element == ByteBuffer {
        let token = UUID()
        var record = try await claimUpload(content: id, token: token, logger: logger)
        do {
            let received = try await writeChunks(of: body, content: id, token: token, limit: record.declaredSize, logger)
            guard received == record.declaredSize else {
                throw Self.lengthMismatch(declared: record.declaredSize, received: received)
            }
            let rows = try await write(
                """
                UPDATE sync.content SET size = \(received), uploaded_at = now(), upload_token = NULL,
                    upload_claimed_at = NULL
                WHERE id = \(id) AND upload_token = \(token)
                RETURNING uploaded_at
                """, logger: logger)
            guard let uploadedAt = try rows.decode(Date.self).first else { throw Self.claimLost }
            record.size = received
            record.uploadedAt = uploadedAt
            return record
        } catch {
            // Best effort: a slot left claimed is taken over once its claim is stale.
            try? await write(
                """
                WITH released AS (
                    UPDATE sync.content SET upload_token = NULL, upload_claimed_at = NULL
                    WHERE id = \(id) AND upload_token = \(token) RETURNING id)
                DELETE FROM sync.content_chunks WHERE content_id IN (SELECT id FROM released)
                """, logger: logger)
            throw error
        }
    }

    /// Claims the slot of content `id` for the upload `token`, removing whatever an abandoned
    /// upload left, in one short transaction.
    private func claimUpload(content id: UUID, token: UUID, logger: Logger) async throws -> ContentRecord {
        try await write(logger: logger) { connection in
            let rows = try await connection.query(
                "SELECT \(unescaped: ContentRecord.columns) FROM sync.content c WHERE c.id = \(id) FOR UPDATE", logger: logger)
            var found: ContentRecord?
            for try await row in rows { found = try ContentRecord(row: row) }
            let claims = try await connection.query(
                """
                SELECT upload_token IS NOT NULL AND upload_claimed_at > now() - \(Self.staleClaim)::interval
                FROM sync.content WHERE id = \(id)
                """, logger: logger)
            var claimed = false
            for try await value in claims.decode(Bool.self) { claimed = value }
            guard let record = found else { throw APIError.notFound("The content") }
            guard !record.isUploaded else {
                throw APIError(.invalidOperation, "This content was uploaded already; content cannot be replaced.")
            }
            guard !claimed else { throw APIError(.invalidOperation, "This content is being uploaded by another request.") }
            try await connection.query("DELETE FROM sync.content_chunks WHERE content_id = \(id)", logger: logger)
            try await connection.query(
                "UPDATE sync.content SET upload_token = \(token), upload_claimed_at = now() WHERE id = \(id)", logger: logger)
            return record
        }
    }

    static let claimLost = APIError(.invalidOperation, "This upload was taken over by another request after it stalled.")

    /// Writes the bytes of `body` to rows of `content_chunks`, each full but the last, and
    /// answers how many bytes there were. Past `limit` it stops reading and throws 413. Each row
    /// is written only while the upload still holds its claim, and renews it.
    private func writeChunks<Bytes: AsyncSequence>(
        of body: Bytes, content id: UUID, token: UUID, limit: Int64, _ logger: Logger
    ) async throws -> Int64 where Bytes.Element == ByteBuffer {
        let chunkSize = Self.contentChunkSize
        var pending = ByteBuffer()
        pending.reserveCapacity(min(chunkSize, Int(clamping: limit)))
        var ordinal: Int32 = 0
        var received: Int64 = 0

        func flush() async throws {
            guard pending.readableBytes > 0 else { return }
            let rows = try await write(
                """
                WITH claim AS (
                    UPDATE sync.content SET upload_claimed_at = now()
                    WHERE id = \(id) AND upload_token = \(token) RETURNING app_id, id)
                INSERT INTO sync.content_chunks (app_id, content_id, ordinal, data)
                SELECT app_id, id, \(ordinal), \(pending) FROM claim
                RETURNING ordinal
                """, logger: logger)
            guard !rows.isEmpty else { throw Self.claimLost }
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

    /// Removes, in batches, the content nothing needs any more, and answers how many went: slots
    /// whose bytes never arrived within `grace`, and content uploaded more than `grace` ago that
    /// no message still standing (in a conversation or channel still standing) and no announcement refers
    /// to. Its chunks go with it.
    @discardableResult
    func collectGarbage(grace: Duration, batch: Int = 500, logger: Logger) async throws -> Int {
        let seconds = grace.components.seconds
        let rows = try await write(
            """
            WITH garbage AS (
                SELECT c.id FROM sync.content c
                WHERE c.upload_token IS NULL AND (
                    (c.uploaded_at IS NULL AND c.created_at < now() - make_interval(secs => \(seconds)))
                    OR (c.uploaded_at < now() - make_interval(secs => \(seconds))
                        AND NOT EXISTS (
                            SELECT 1 FROM sync.message_content mc
                            JOIN sync.messages m ON m.id = mc.message_id AND m.deleted_at IS NULL
                            JOIN sync.conversations cv ON cv.id = m.conversation_id AND cv.deleted_at IS NULL
                            WHERE mc.content_id = c.id)
                        AND NOT EXISTS (
                            SELECT 1 FROM sync.message_content mc
                            JOIN sync.messages m ON m.id = mc.message_id AND m.deleted_at IS NULL
                            JOIN sync.channels ch ON ch.id = m.channel_id AND ch.deleted_at IS NULL
                            WHERE mc.content_id = c.id)
                        AND NOT EXISTS (
                            SELECT 1 FROM sync.announcements a
                            WHERE a.app_id = c.app_id AND strpos(a.parts::text, c.id::text) > 0)
                        AND NOT EXISTS (
                            SELECT 1 FROM sync.scheduled_messages s
                            WHERE s.app_id = c.app_id AND strpos(s.parts::text, c.id::text) > 0)))
                LIMIT \(batch)
                FOR UPDATE SKIP LOCKED)
            DELETE FROM sync.content WHERE id IN (SELECT id FROM garbage) RETURNING id
            """, logger: logger)
        return rows.count
    }

    /// One stored row of a payload, or nil past its end.
    func contentChunk(content id: UUID, ordinal: Int32, logger: Logger) async throws -> ByteBuffer? {
        let rows = try await postgres.query(
            "SELECT data FROM sync.content_chunks WHERE content_id = \(id) AND ordinal = \(ordinal)", logger: logger)
        for try await data in rows.decode(ByteBuffer.self) { return data }
        return nil
    }

    /// Checks the rich content that parts refer to: it exists in this app, its bytes were
    /// uploaded, and it belongs to the sender (any user's content of the app for a system sender).
    /// Content the app's backend opened for a conversation is usable only by its sends to that
    /// conversation (`appContentOf`). The parts come back with the size the content really has,
    /// whatever size they declared: the Web SDKs declare a text's length in JavaScript characters,
    /// not in bytes, so a declared size that differs is no reason to lose the message.
    func resolveContent(
        app: UUID, owner: String?, parts: ValidatedParts, appContentOf conversation: UUID? = nil, logger: Logger
    ) async throws -> ValidatedParts {
        let ids = parts.contentIDs
        guard !ids.isEmpty else { return parts }
        let rows = try await postgres.query(
            """
            SELECT id, owner_id, conversation_id, size FROM sync.content
            WHERE app_id = \(app) AND id = ANY(\(ids)) AND uploaded_at IS NOT NULL
            """, logger: logger)
        var sizes: [UUID: Int64] = [:]
        for try await (id, contentOwner, contentConversation, size) in rows.decode((UUID, String, UUID?, Int64?).self) {
            let usable =
                contentOwner == ContentRecord.appOwner
                ? conversation != nil && contentConversation == conversation : owner == nil || owner == contentOwner
            if usable, let size { sizes[id] = size }
        }
        var resolved = parts
        for index in resolved.parts.indices {
            guard let contentID = resolved.parts[index].contentID else { continue }
            let property = "parts.\(index).content"
            guard let size = sizes[contentID] else {
                throw APIError.invalid("\(property).id", "No uploaded content of yours has the id \(contentID.lowercased).")
            }
            resolved.parts[index].size = size
        }
        return resolved
    }
}
