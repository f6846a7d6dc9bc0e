import LayerServer

/// Conversations with their participants and messages, receipts and tags, identities, blocks,
/// rich content, announcements, and the per-user changelog with its sequence counters.
let m0001CreateSyncSchema = Migration(
    1, "create_sync_schema",
    [
        """
        CREATE TABLE sync.identities (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            display_name text,
            avatar_url text,
            first_name text,
            last_name text,
            phone_number text,
            email_address text,
            public_key text,
            identity_type text NOT NULL DEFAULT 'user',
            metadata jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id))
        """,
        """
        CREATE TABLE sync.conversations (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            created_by text,
            is_distinct boolean NOT NULL,
            distinct_key text,
            metadata jsonb NOT NULL DEFAULT '{}',
            last_position bigint NOT NULL DEFAULT 0,
            last_message_at timestamptz,
            deleted_at timestamptz)
        """,
        // Concurrent creators of one distinct conversation meet on this index.
        "CREATE UNIQUE INDEX conversations_distinct ON sync.conversations (app_id, distinct_key) WHERE distinct_key IS NOT NULL",
        """
        CREATE TABLE sync.participants (
            app_id uuid NOT NULL,
            conversation_id uuid NOT NULL REFERENCES sync.conversations (id),
            user_id text NOT NULL,
            joined_at timestamptz NOT NULL DEFAULT now(),
            left_position bigint,
            cleared_position bigint NOT NULL DEFAULT 0,
            hidden boolean NOT NULL DEFAULT false,
            delivered_position bigint NOT NULL DEFAULT 0,
            read_position bigint NOT NULL DEFAULT 0,
            private_metadata jsonb NOT NULL DEFAULT '{}',
            PRIMARY KEY (conversation_id, user_id))
        """,
        "CREATE INDEX participants_user ON sync.participants (app_id, user_id)",
        """
        CREATE TABLE sync.messages (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            conversation_id uuid NOT NULL REFERENCES sync.conversations (id),
            position bigint NOT NULL,
            sender_id text,
            sender_name text,
            parts jsonb NOT NULL,
            notification jsonb,
            sent_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            updated_at timestamptz,
            deleted_at timestamptz,
            UNIQUE (conversation_id, position))
        """,
        """
        CREATE TABLE sync.receipts (
            app_id uuid NOT NULL,
            message_id uuid NOT NULL,
            user_id text NOT NULL,
            status smallint NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (message_id, user_id))
        """,
        """
        CREATE TABLE sync.message_tags (
            app_id uuid NOT NULL,
            message_id uuid NOT NULL,
            user_id text NOT NULL,
            tags text[] NOT NULL,
            PRIMARY KEY (message_id, user_id))
        """,
        """
        CREATE TABLE sync.blocks (
            app_id uuid NOT NULL,
            owner_id text NOT NULL,
            blocked_id text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, owner_id, blocked_id))
        """,
        """
        CREATE TABLE sync.user_seqs (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            last_seq bigint NOT NULL,
            PRIMARY KEY (app_id, user_id))
        """,
        """
        CREATE TABLE sync.changelog (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            seq bigint NOT NULL,
            type text NOT NULL,
            conversation_id uuid,
            message_id uuid,
            data jsonb,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id, seq))
        """,
        // Appends one change to the changelogs of `users`. Each user's counter row stays locked
        // until the writing transaction commits, so a user's sequence numbers become visible in
        // commit order: a reader that has seen seq N never later finds a new row below N. Rows
        // are locked in user order, so two writers never wait on each other in a circle.
        """
        CREATE FUNCTION sync.append_change(
            p_app uuid, p_users text[], p_type text, p_conversation uuid, p_message uuid, p_data jsonb
        ) RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE appended integer;
        BEGIN
            WITH seqs AS (
                INSERT INTO sync.user_seqs AS s (app_id, user_id, last_seq)
                SELECT p_app, u, 1 FROM (SELECT DISTINCT unnest(p_users) AS u) AS users ORDER BY u
                ON CONFLICT (app_id, user_id) DO UPDATE SET last_seq = s.last_seq + 1
                RETURNING s.user_id, s.last_seq)
            INSERT INTO sync.changelog (app_id, user_id, seq, type, conversation_id, message_id, data)
            SELECT p_app, user_id, last_seq, p_type, p_conversation, p_message, p_data FROM seqs;
            GET DIAGNOSTICS appended = ROW_COUNT;
            RETURN appended;
        END $$
        """,
        """
        CREATE TABLE sync.content (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            owner_id text NOT NULL,
            content_type text NOT NULL,
            declared_size bigint NOT NULL,
            size bigint,
            created_at timestamptz NOT NULL DEFAULT now(),
            uploaded_at timestamptz)
        """,
        """
        CREATE TABLE sync.content_chunks (
            content_id uuid NOT NULL REFERENCES sync.content (id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (content_id, ordinal))
        """,
        """
        CREATE TABLE sync.message_content (
            app_id uuid NOT NULL,
            content_id uuid NOT NULL,
            message_id uuid NOT NULL,
            conversation_id uuid NOT NULL,
            PRIMARY KEY (content_id, message_id))
        """,
        """
        CREATE TABLE sync.announcements (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            position bigserial,
            sender_id text,
            sender_name text,
            parts jsonb NOT NULL,
            notification jsonb,
            sent_at timestamptz NOT NULL DEFAULT clock_timestamp())
        """,
        """
        CREATE TABLE sync.announcement_recipients (
            app_id uuid NOT NULL,
            announcement_id uuid NOT NULL REFERENCES sync.announcements (id),
            user_id text NOT NULL,
            status smallint NOT NULL DEFAULT 0,
            deleted_at timestamptz,
            PRIMARY KEY (announcement_id, user_id))
        """,
        "CREATE INDEX announcement_recipients_user ON sync.announcement_recipients (app_id, user_id)",
        """
        CREATE TABLE sync.request_tags (
            app_id uuid NOT NULL,
            tag uuid NOT NULL,
            resource text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, tag))
        """,
    ])
