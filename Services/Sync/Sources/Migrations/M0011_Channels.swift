import LayerServer

/// Channels: large groups (up to 250 members) with a name unique in the app, which any user of
/// the app may join. A channel is its own table rather than a kind of conversation, so no query
/// of conversations can ever meet one.
///
/// Channel messages live in `sync.messages` beside conversation messages, with `channel_id` set
/// instead of `conversation_id`: one id space for every message (a client-chosen id is taken
/// whichever container it went to), one store of parts and rich content. Every query of
/// conversations reaches messages through `conversation_id`, which a channel message leaves
/// NULL, so they never see one; the counting triggers of ``m0008ParticipantCounts`` find no
/// participant for it either. `sync.message_content.conversation_id` holds the channel's id for
/// the content of a channel message, and the changelog's `conversation_id` the channel's id for
/// the channel operations (their types say which it is).
let m0011Channels = Migration(
    11, "channels",
    [
        """
        CREATE TABLE sync.channels (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            name text NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            created_by text,
            member_count integer NOT NULL DEFAULT 0,
            last_position bigint NOT NULL DEFAULT 0,
            deleted_at timestamptz)
        """,
        // Concurrent creators of one name meet on this index; a deleted channel frees its name.
        "CREATE UNIQUE INDEX channels_name ON sync.channels (app_id, name) WHERE deleted_at IS NULL",
        "CREATE INDEX channels_app ON sync.channels (app_id, created_at)",
        """
        CREATE TABLE sync.channel_members (
            app_id uuid NOT NULL,
            channel_id uuid NOT NULL REFERENCES sync.channels (id),
            user_id text NOT NULL,
            role text NOT NULL,
            joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            PRIMARY KEY (channel_id, user_id))
        """,
        "CREATE INDEX channel_members_user ON sync.channel_members (app_id, user_id)",
        """
        ALTER TABLE sync.messages
            ALTER COLUMN conversation_id DROP NOT NULL,
            ADD COLUMN channel_id uuid REFERENCES sync.channels (id),
            ADD CONSTRAINT messages_one_container CHECK ((conversation_id IS NULL) <> (channel_id IS NULL))
        """,
        "CREATE UNIQUE INDEX messages_channel_position ON sync.messages (channel_id, position) WHERE channel_id IS NOT NULL",
    ])
