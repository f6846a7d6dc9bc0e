import LayerServer

/// Every table that holds an app's data names the app: the chunks of uploaded content and of
/// export archives did so only through their parent row. With `app_id` on them, every table of
/// app data can be distributed by it (docs/scale.md), and a chunk is found by its app first.
let m0018ChunksOfApps = Migration(
    18, "chunks_of_apps",
    [
        "ALTER TABLE sync.content_chunks ADD COLUMN app_id uuid",
        "UPDATE sync.content_chunks k SET app_id = c.app_id FROM sync.content c WHERE c.id = k.content_id",
        "ALTER TABLE sync.content_chunks ALTER COLUMN app_id SET NOT NULL",
        "ALTER TABLE sync.export_chunks ADD COLUMN app_id uuid",
        "UPDATE sync.export_chunks k SET app_id = e.app_id FROM sync.exports e WHERE e.id = k.export_id",
        "ALTER TABLE sync.export_chunks ALTER COLUMN app_id SET NOT NULL",
    ])
