import LayerServer

/// A user's tags found from the user: a snapshot sends the tags of older messages that its
/// policy otherwise leaves out, and finds them here instead of reading every message of each
/// conversation to see which ones carry tags.
let m0009TagsByUser = Migration(
    9, "tags_by_user",
    [
        "CREATE INDEX message_tags_user ON sync.message_tags (app_id, user_id)"
    ])
