import LayerServer

/// The outboxes ring: every replica's webhook deliverer and push-notification sender sleep until
/// something is recorded for them, rather than look every fraction of a second. Recording a webhook
/// event notifies `sync_push` with `{"a":<app>,"w":1}`, a push job with `{"a":<app>,"j":1}`: once
/// per transaction and app however many it records (PostgreSQL folds equal notices), and only
/// when a webhook or a push provider is there to record them, so that a change with neither
/// still costs an index probe each.
let m0017OutboxNotices = Migration(
    17, "outbox_notices",
    [
        """
        CREATE OR REPLACE FUNCTION sync.record_webhook_event(
            p_app uuid, p_kind text, p_conversation uuid, p_message uuid, p_actor text, p_actor_name text,
            p_data jsonb DEFAULT NULL
        ) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO sync.webhook_deliveries
                (webhook_id, app_id, kind, conversation_id, message_id, actor_id, actor_name, data, occurred_at)
            SELECT w.id, p_app, p_kind, p_conversation, p_message, p_actor, p_actor_name, p_data, clock_timestamp()
            FROM sync.webhooks w
            WHERE w.app_id = p_app AND (w.status <> 'inactive' OR w.paused) AND p_kind = ANY(w.kinds);
            IF FOUND THEN
                PERFORM pg_notify('sync_push', '{"a":"' || p_app || '","w":1}');
            END IF;
        END $$
        """,
        """
        CREATE FUNCTION sync.push_job_notice() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('sync_push', '{"a":"' || NEW.app_id || '","j":1}');
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER push_job_notice AFTER INSERT ON sync.push_jobs
        FOR EACH ROW EXECUTE FUNCTION sync.push_job_notice()
        """,
    ])
