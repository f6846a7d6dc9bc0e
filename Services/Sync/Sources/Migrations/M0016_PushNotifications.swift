import LayerServer

/// Push notifications through APNs and FCM: each app's provider credentials, the devices' push
/// tokens, and the outbox of push jobs, written by triggers in the transaction of the message,
/// announcement or read that causes them, so that no push is lost to a crash between the commit
/// and the delivery. A job names what happened, not who gets what: recipients, their tokens and
/// whether a device is connected are read when it is sent. With no provider set for the app, a
/// message costs one index probe.
let m0016PushNotifications = Migration(
    16, "push_notifications",
    [
        """
        CREATE TABLE sync.push_providers (
            app_id uuid NOT NULL,
            provider text NOT NULL CHECK (provider IN ('apns', 'fcm')),
            -- What is not secret: APNs team, key id, topic and environment; FCM project and client.
            settings jsonb NOT NULL,
            -- The APNs .p8 key or the service account's private key, sealed (AES-GCM).
            sealed_key bytea NOT NULL,
            status text NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failing')),
            status_reason text,
            failing_since timestamptz,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, provider))
        """,
        """
        CREATE TABLE sync.push_tokens (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            device_id text NOT NULL,
            provider text NOT NULL CHECK (provider IN ('apns', 'fcm')),
            token text NOT NULL,
            apns_bundle_id text,
            gcm_sender_id text,
            ios_version text,
            -- The session that registered it (base64url SHA-256 of its token): a device connected
            -- with that session gets its messages over the socket, not as a push.
            session_ref text,
            created_at timestamptz NOT NULL DEFAULT now(),
            used_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id, device_id))
        """,
        // A token belongs to one device of one user: registered again by another, it moves.
        "CREATE UNIQUE INDEX push_tokens_by_token ON sync.push_tokens (app_id, provider, token)",
        // Which session each connected device uses, to tell which push tokens are connected.
        "ALTER TABLE sync.devices ADD COLUMN session_ref text",
        """
        CREATE TABLE sync.push_jobs (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app_id uuid NOT NULL,
            kind text NOT NULL CHECK (kind IN ('message', 'announcement', 'notification', 'badge', 'retry')),
            -- The message or announcement.
            subject_id uuid,
            -- The recipients of a notification, the user of a badge.
            users text[],
            notification jsonb,
            -- A retry: the provider, token and the rendered request that failed.
            delivery jsonb,
            attempts int NOT NULL DEFAULT 0,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            next_attempt_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX push_jobs_due ON sync.push_jobs (next_attempt_at)",
        // One badge job waiting per user: reads in a row coalesce into one update.
        """
        CREATE UNIQUE INDEX push_jobs_one_badge ON sync.push_jobs (app_id, (users[1]))
        WHERE kind = 'badge' AND attempts = 0
        """,
        """
        CREATE TABLE sync.push_failures (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app_id uuid NOT NULL,
            provider text NOT NULL,
            user_id text,
            device_id text,
            kind text NOT NULL,
            subject_id uuid,
            status int,
            reason text NOT NULL,
            -- What was done about it: retried, token_removed, provider_failing, dropped.
            outcome text NOT NULL,
            occurred_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX push_failures_by_app ON sync.push_failures (app_id, id)",
        """
        CREATE FUNCTION sync.push_message_job() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            -- Channel messages are not pushed: a channel is followed, not a conversation one is in.
            IF NEW.conversation_id IS NOT NULL
                AND EXISTS (SELECT 1 FROM sync.push_providers WHERE app_id = NEW.app_id) THEN
                INSERT INTO sync.push_jobs (app_id, kind, subject_id) VALUES (NEW.app_id, 'message', NEW.id);
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER push_message_job AFTER INSERT ON sync.messages
        FOR EACH ROW EXECUTE FUNCTION sync.push_message_job()
        """,
        """
        CREATE FUNCTION sync.push_announcement_job() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM sync.push_providers WHERE app_id = NEW.app_id) THEN
                INSERT INTO sync.push_jobs (app_id, kind, subject_id) VALUES (NEW.app_id, 'announcement', NEW.id);
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER push_announcement_job AFTER INSERT ON sync.announcements
        FOR EACH ROW EXECUTE FUNCTION sync.push_announcement_job()
        """,
        // A read (or a deletion) that lowers a participant's unread count updates the badge of
        // their devices that hold a token, with a silent push.
        """
        CREATE FUNCTION sync.push_badge_job() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF EXISTS (SELECT 1 FROM sync.push_tokens WHERE app_id = NEW.app_id AND user_id = NEW.user_id)
                AND EXISTS (SELECT 1 FROM sync.push_providers WHERE app_id = NEW.app_id) THEN
                INSERT INTO sync.push_jobs (app_id, kind, users) VALUES (NEW.app_id, 'badge', ARRAY[NEW.user_id])
                ON CONFLICT (app_id, (users[1])) WHERE kind = 'badge' AND attempts = 0 DO NOTHING;
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER push_badge_job AFTER UPDATE ON sync.participants
        FOR EACH ROW WHEN (NEW.unread_count < OLD.unread_count) EXECUTE FUNCTION sync.push_badge_job()
        """,
    ])
