import LayerServer

/// Delayed sends of the Server API (`"schedule"` in a message body): each waits here, under the
/// id its message will have, until it is sent or dropped. `due_at` is when a replica must next
/// look at it: when the sender's typing indicator starts or must be repeated, or when it is sent.
/// Rich content opened through the Server API belongs to the app and to one conversation
/// (`conversation_id`; its `owner_id` is empty, which no user id is).
let m0007ScheduledMessages = Migration(
    7, "scheduled_messages",
    [
        """
        CREATE TABLE sync.scheduled_messages (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            conversation_id uuid NOT NULL,
            sender_id text,
            sender_name text,
            parts jsonb NOT NULL,
            notification jsonb,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            send_at timestamptz NOT NULL,
            typing_from timestamptz,
            typing_started boolean NOT NULL DEFAULT false,
            due_at timestamptz NOT NULL,
            CHECK ((sender_id IS NULL) <> (sender_name IS NULL)))
        """,
        "CREATE INDEX scheduled_messages_due ON sync.scheduled_messages (due_at)",
        "ALTER TABLE sync.content ADD COLUMN conversation_id uuid",
    ])
