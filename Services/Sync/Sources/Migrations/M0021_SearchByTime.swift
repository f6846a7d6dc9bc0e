import LayerServer

/// Search's newest-first walk: with the messages of an app in the order of their time, a search
/// for a common word reads the newest messages until it has a page, instead of gathering every
/// match from the words index and sorting them. PostgreSQL chooses between the two by how common
/// the words are.
let m0021SearchByTime = Migration(
    21, "search_by_time",
    ["CREATE INDEX messages_app_sent ON sync.messages (app_id, sent_at DESC, id DESC)"])
