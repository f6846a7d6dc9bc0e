import LayerServer

/// Badges and data exports of the Server API.
///
/// - `badges`: the external unread count an app's backend sets per user.
/// - `export_keys`, `export_schedules`, `exports`, `export_chunks`: an app's RSA public key,
///   its daily export schedule, and each export with its encrypted archive in rows of at most
///   1 MiB. An export is a job: `pending`, then `executing` under a claim with a lease that its
///   worker renews (another replica takes it over once the lease ran out), then `completed` or
///   `failed`.
/// - `participant_changes`, `metadata_changes`: the history of who was in a conversation and of
///   its metadata, which the base tables keep only as their latest state. Triggers record every
///   change, whoever makes it; rows before this migration are filled in from that latest state.
let m0006Exports = Migration(
    6, "exports",
    [
        """
        CREATE TABLE sync.badges (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            external_unread_count integer NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id))
        """,
        """
        CREATE TABLE sync.export_keys (
            app_id uuid PRIMARY KEY,
            public_key text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE sync.export_schedules (
            app_id uuid PRIMARY KEY,
            frequency text NOT NULL,
            events text[] NOT NULL,
            next_export_at timestamptz,
            last_export_at timestamptz,
            last_export_id uuid,
            covered_until timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX export_schedules_due ON sync.export_schedules (next_export_at) WHERE next_export_at IS NOT NULL",
        """
        CREATE TABLE sync.exports (
            app_id uuid NOT NULL,
            id uuid PRIMARY KEY,
            type text NOT NULL,
            status text NOT NULL DEFAULT 'pending',
            events text[] NOT NULL,
            since timestamptz,
            until timestamptz NOT NULL,
            public_key text NOT NULL,
            encrypted_aes_key text,
            aes_iv text,
            size bigint,
            event_count bigint,
            error text,
            created_at timestamptz NOT NULL DEFAULT now(),
            started_at timestamptz,
            completed_at timestamptz,
            expires_at timestamptz NOT NULL,
            claim uuid,
            lease_until timestamptz,
            attempts integer NOT NULL DEFAULT 0)
        """,
        "CREATE INDEX exports_app ON sync.exports (app_id, created_at DESC, id DESC)",
        "CREATE INDEX exports_waiting ON sync.exports (created_at) WHERE status IN ('pending', 'executing')",
        "CREATE INDEX exports_expiring ON sync.exports (expires_at)",
        // One historical export of an app at a time.
        """
        CREATE UNIQUE INDEX exports_one_historical ON sync.exports (app_id)
        WHERE type = 'historical' AND status IN ('pending', 'executing')
        """,
        """
        CREATE TABLE sync.export_chunks (
            export_id uuid NOT NULL REFERENCES sync.exports (id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            data bytea NOT NULL,
            PRIMARY KEY (export_id, ordinal))
        """,
        """
        CREATE TABLE sync.participant_changes (
            id bigserial PRIMARY KEY,
            app_id uuid NOT NULL,
            conversation_id uuid NOT NULL,
            user_id text NOT NULL,
            added boolean NOT NULL,
            changed_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX participant_changes_conversation ON sync.participant_changes (conversation_id, changed_at)",
        "CREATE INDEX participant_changes_app ON sync.participant_changes (app_id, changed_at)",
        """
        CREATE TABLE sync.metadata_changes (
            id bigserial PRIMARY KEY,
            app_id uuid NOT NULL,
            conversation_id uuid NOT NULL,
            metadata jsonb NOT NULL,
            initial boolean NOT NULL,
            changed_at timestamptz NOT NULL)
        """,
        "CREATE INDEX metadata_changes_conversation ON sync.metadata_changes (conversation_id, changed_at)",
        "CREATE INDEX metadata_changes_app ON sync.metadata_changes (app_id, changed_at) WHERE NOT initial",
        // A participant joins (inserted, or back after leaving) or leaves (left_at set). All
        // changes of one transaction share its time, so one PATCH makes one event.
        """
        CREATE FUNCTION sync.record_participant_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO sync.participant_changes (app_id, conversation_id, user_id, added)
            VALUES (NEW.app_id, NEW.conversation_id, NEW.user_id, NEW.left_at IS NULL);
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER participants_joined AFTER INSERT ON sync.participants
        FOR EACH ROW EXECUTE FUNCTION sync.record_participant_change()
        """,
        """
        CREATE TRIGGER participants_left_or_rejoined AFTER UPDATE OF left_at ON sync.participants
        FOR EACH ROW WHEN (OLD.left_at IS DISTINCT FROM NEW.left_at) EXECUTE FUNCTION sync.record_participant_change()
        """,
        // The metadata a conversation started with, and each later change.
        """
        CREATE FUNCTION sync.record_metadata_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO sync.metadata_changes (app_id, conversation_id, metadata, initial, changed_at)
            VALUES (NEW.app_id, NEW.id, NEW.metadata, TG_OP = 'INSERT',
                CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at ELSE greatest(now(), NEW.created_at) END);
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER conversations_created AFTER INSERT ON sync.conversations
        FOR EACH ROW EXECUTE FUNCTION sync.record_metadata_change()
        """,
        """
        CREATE TRIGGER conversations_metadata_changed AFTER UPDATE OF metadata ON sync.conversations
        FOR EACH ROW WHEN (OLD.metadata IS DISTINCT FROM NEW.metadata) EXECUTE FUNCTION sync.record_metadata_change()
        """,
        """
        INSERT INTO sync.participant_changes (app_id, conversation_id, user_id, added, changed_at)
        SELECT app_id, conversation_id, user_id, true, joined_at FROM sync.participants
        UNION ALL
        SELECT app_id, conversation_id, user_id, false, left_at FROM sync.participants WHERE left_at IS NOT NULL
        """,
        """
        INSERT INTO sync.metadata_changes (app_id, conversation_id, metadata, initial, changed_at)
        SELECT app_id, id, metadata, true, created_at FROM sync.conversations
        """,
    ])
