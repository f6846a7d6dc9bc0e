import LayerServer

/// Push: the changelog announces each change on commit, replicas register the devices connected
/// to them (so a signal can say how many it reached, and presence knows when the last one left),
/// and each user's chosen presence.
let m0002Push = Migration(
    2, "push",
    [
        // Per user, each change's time is later than the one before, so `Event.replay` from a
        // packet's timestamp resumes exactly after it.
        "ALTER TABLE sync.user_seqs ADD COLUMN last_at timestamptz NOT NULL DEFAULT clock_timestamp()",
        // As before, and then one notification (or several, each within PostgreSQL's payload
        // limit) naming the app and each user with their new seq: `{"a":app,"c":[[user,seq],…]}`.
        // PostgreSQL delivers notifications only when the transaction commits, in commit order.
        """
        CREATE OR REPLACE FUNCTION sync.append_change(
            p_app uuid, p_users text[], p_type text, p_conversation uuid, p_message uuid, p_data jsonb
        ) RETURNS integer LANGUAGE plpgsql AS $$
        DECLARE
            entries text[];
            entry text;
            chunk text := '';
        BEGIN
            WITH seqs AS (
                INSERT INTO sync.user_seqs AS s (app_id, user_id, last_seq, last_at)
                SELECT p_app, u, 1, clock_timestamp() FROM (SELECT DISTINCT unnest(p_users) AS u) AS users ORDER BY u
                ON CONFLICT (app_id, user_id) DO UPDATE
                    SET last_seq = s.last_seq + 1, last_at = greatest(clock_timestamp(), s.last_at + interval '1 microsecond')
                RETURNING s.user_id, s.last_seq, s.last_at),
            logged AS (
                INSERT INTO sync.changelog (app_id, user_id, seq, type, conversation_id, message_id, data, created_at)
                SELECT p_app, user_id, last_seq, p_type, p_conversation, p_message, p_data, last_at FROM seqs
                RETURNING user_id, seq)
            SELECT array_agg(json_build_array(user_id, seq)::text) INTO entries FROM logged;
            IF entries IS NULL THEN RETURN 0; END IF;
            FOREACH entry IN ARRAY entries LOOP
                IF length(chunk) + length(entry) > 7000 THEN
                    PERFORM pg_notify('sync_push', '{"a":"' || p_app || '","c":[' || chunk || ']}');
                    chunk := '';
                END IF;
                chunk := chunk || CASE WHEN chunk = '' THEN '' ELSE ',' END || entry;
            END LOOP;
            PERFORM pg_notify('sync_push', '{"a":"' || p_app || '","c":[' || chunk || ']}');
            RETURN array_length(entries, 1);
        END $$
        """,
        """
        CREATE TABLE sync.replicas (
            id uuid PRIMARY KEY,
            started_at timestamptz NOT NULL DEFAULT now(),
            seen_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE sync.devices (
            replica_id uuid NOT NULL REFERENCES sync.replicas (id) ON DELETE CASCADE,
            id bigint NOT NULL,
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            kind text NOT NULL,
            connected_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (replica_id, id))
        """,
        "CREATE INDEX devices_by_user ON sync.devices (app_id, user_id)",
        """
        CREATE TABLE sync.presence (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            status text NOT NULL,
            last_seen_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id))
        """,
    ])
