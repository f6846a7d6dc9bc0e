import LayerServer

/// Uploads outside long transactions: an upload claims its slot with a token in a short
/// transaction, writes each chunk on its own, and completes in another short transaction. A
/// claim whose upload stopped writing is taken over once it is stale. The owner index serves the
/// per-user storage quota and the collection of unreferenced content.
let m0004ContentUploads = Migration(
    4, "content_uploads",
    [
        "ALTER TABLE sync.content ADD COLUMN upload_token uuid, ADD COLUMN upload_claimed_at timestamptz",
        "CREATE INDEX content_owner ON sync.content (app_id, owner_id)",
        "CREATE INDEX message_content_message ON sync.message_content (message_id)",
    ])
