import LayerServer

/// The webhooks' outbox: one row for each event a webhook listens to, written by triggers in the
/// transaction of the change that caused it (whichever door the change came through: the Client
/// API, the Server API, WebSocket requests, the scheduler), and delivered (then kept a while for
/// the delivery log) or retried by the replicas, which take rows under a lease. `kinds` are the
/// events a webhook listens to by their 1.0 names, whatever its version, so that a change records
/// one kind for every version. With no webhook listening, a change costs one index probe.
let m0015WebhookDeliveries = Migration(
    15, "webhook_deliveries",
    [
        "ALTER TABLE sync.webhooks ADD COLUMN kinds text[] NOT NULL DEFAULT '{}'",
        // How long its receiver has to answer, and its deliveries may fail before it turns inactive:
        // the settings of the replica that registered it, so that every replica holds it to the same.
        "ALTER TABLE sync.webhooks ADD COLUMN timeout_ms int NOT NULL DEFAULT 5000",
        "ALTER TABLE sync.webhooks ADD COLUMN retry_window_s int NOT NULL DEFAULT 1800",
        // How long its events are kept, delivered (for the log and replays) or not (for an activate).
        "ALTER TABLE sync.webhooks ADD COLUMN keep_s int NOT NULL DEFAULT 86400",
        // Whether it may call loopback and private addresses (LAYER_WEBHOOK_PRIVATE_TARGETS).
        "ALTER TABLE sync.webhooks ADD COLUMN private_targets boolean NOT NULL DEFAULT false",
        // Paused by the operator: inactive, but still recording events, which a resume delivers.
        "ALTER TABLE sync.webhooks ADD COLUMN paused boolean NOT NULL DEFAULT false",
        """
        CREATE TABLE sync.webhook_deliveries (
            id bigserial PRIMARY KEY,
            webhook_id uuid NOT NULL REFERENCES sync.webhooks (id) ON DELETE CASCADE,
            app_id uuid NOT NULL,
            kind text NOT NULL,
            -- The conversation or channel: a webhook's events of one go out one at a time, in order.
            conversation_id uuid NOT NULL,
            message_id uuid,
            actor_id text,
            actor_name text,
            data jsonb,
            occurred_at timestamptz NOT NULL,
            request_id uuid NOT NULL DEFAULT gen_random_uuid(),
            attempts int NOT NULL DEFAULT 0,
            first_failed_at timestamptz,
            next_attempt_at timestamptz NOT NULL DEFAULT now(),
            lease_until timestamptz,
            last_status int,
            last_error text,
            last_latency_ms int,
            delivered_at timestamptz
        )
        """,
        """
        CREATE INDEX webhook_deliveries_due ON sync.webhook_deliveries (next_attempt_at)
        WHERE delivered_at IS NULL
        """,
        """
        CREATE INDEX webhook_deliveries_in_order ON sync.webhook_deliveries (webhook_id, conversation_id, id)
        WHERE delivered_at IS NULL
        """,
        // Old events are found by age for pruning; a BRIN index costs next to nothing per row.
        "CREATE INDEX webhook_deliveries_age ON sync.webhook_deliveries USING brin (occurred_at)",
        "CREATE INDEX webhooks_listening ON sync.webhooks (app_id) WHERE status <> 'inactive' OR paused",
        """
        CREATE FUNCTION sync.record_webhook_event(
            p_app uuid, p_kind text, p_conversation uuid, p_message uuid, p_actor text, p_actor_name text,
            p_data jsonb DEFAULT NULL
        ) RETURNS void LANGUAGE plpgsql AS $$
        BEGIN
            -- PL/pgSQL rather than SQL: its plan is kept for the session, where an SQL function's
            -- statement would be planned again on every change.
            INSERT INTO sync.webhook_deliveries
                (webhook_id, app_id, kind, conversation_id, message_id, actor_id, actor_name, data, occurred_at)
            SELECT w.id, p_app, p_kind, p_conversation, p_message, p_actor, p_actor_name, p_data, clock_timestamp()
            FROM sync.webhooks w
            WHERE w.app_id = p_app AND (w.status <> 'inactive' OR w.paused) AND p_kind = ANY(w.kinds);
        END $$
        """,
        """
        CREATE FUNCTION sync.webhook_message_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            -- A channel message has no 1.0 event: channels came with 2.0, whose names its kinds take.
            IF TG_OP = 'INSERT' THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, CASE WHEN NEW.channel_id IS NULL THEN 'message.sent' ELSE 'Message.created' END,
                    coalesce(NEW.conversation_id, NEW.channel_id), NEW.id, NEW.sender_id, NEW.sender_name);
            ELSIF NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, CASE WHEN NEW.channel_id IS NULL THEN 'message.deleted' ELSE 'Message.deleted' END,
                    coalesce(NEW.conversation_id, NEW.channel_id), NEW.id, NULL, NULL);
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_message_events AFTER INSERT OR UPDATE OF deleted_at ON sync.messages
        FOR EACH ROW EXECUTE FUNCTION sync.webhook_message_events()
        """,
        """
        CREATE FUNCTION sync.webhook_receipt_events() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            receipted sync.messages%ROWTYPE;
        BEGIN
            IF TG_OP = 'UPDATE' AND NEW.status <= OLD.status THEN RETURN NULL; END IF;
            IF NEW.status IN (1, 2) THEN
                SELECT * INTO receipted FROM sync.messages m WHERE m.id = NEW.message_id;
                IF receipted.conversation_id IS NULL THEN RETURN NULL; END IF;
                -- 2.0 and 3.0 speak of receipts by position (`Receipt.created`).
                PERFORM sync.record_webhook_event(
                    NEW.app_id, CASE NEW.status WHEN 1 THEN 'message.delivered' ELSE 'message.read' END,
                    receipted.conversation_id, NEW.message_id, NEW.user_id, NULL,
                    jsonb_build_object('from', receipted.position, 'to', receipted.position));
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_receipt_events AFTER INSERT OR UPDATE OF status ON sync.receipts
        FOR EACH ROW EXECUTE FUNCTION sync.webhook_receipt_events()
        """,
        """
        CREATE FUNCTION sync.webhook_conversation_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            -- The metadata as it is now: the conversation is rendered when the event is delivered,
            -- by which time it may have changed again.
            IF TG_OP = 'INSERT' THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, 'conversation.created', NEW.id, NULL, NEW.created_by, NULL,
                    jsonb_build_object('metadata', NEW.metadata));
                RETURN NULL;
            END IF;
            IF NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, 'conversation.deleted', NEW.id, NULL, NULL, NULL, jsonb_build_object('metadata', NEW.metadata));
            ELSIF NEW.metadata IS DISTINCT FROM OLD.metadata THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, 'conversation.updated.metadata', NEW.id, NULL, NULL, NULL,
                    jsonb_build_object('metadata', NEW.metadata));
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_conversation_events AFTER INSERT OR UPDATE OF metadata, deleted_at ON sync.conversations
        FOR EACH ROW EXECUTE FUNCTION sync.webhook_conversation_events()
        """,
        """
        CREATE FUNCTION sync.webhook_participant_events() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            change text;
        BEGIN
            -- Marking everything up to a position read: one receipt of that range (2.0 and 3.0 only;
            -- a 1.0 webhook hears of receipts one message at a time).
            IF TG_OP = 'UPDATE' AND NEW.read_position > OLD.read_position THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, 'Receipt.created', NEW.conversation_id, NULL, NEW.user_id, NULL,
                    jsonb_build_object('from', OLD.read_position + 1, 'to', NEW.read_position));
            END IF;
            IF TG_OP = 'UPDATE' AND NEW.left_position IS NOT DISTINCT FROM OLD.left_position THEN RETURN NULL; END IF;
            -- The participants a new conversation starts with are its creation, not a change.
            IF TG_OP = 'INSERT' AND EXISTS (
                SELECT 1 FROM sync.conversations c WHERE c.id = NEW.conversation_id AND c.created_at >= now()
            ) THEN
                RETURN NULL;
            END IF;
            -- One event for a change of several participants in one transaction: 1.0's, and 2.0's of
            -- those who joined and of those who left, each listing them. (The rows of this
            -- transaction are found through the listening webhooks and the order index.)
            change := CASE WHEN NEW.left_position IS NULL THEN 'Participation.created' ELSE 'Participation.deleted' END;
            UPDATE sync.webhook_deliveries d SET data = jsonb_set(d.data, '{changes}', d.data->'changes' || to_jsonb(NEW.user_id))
            WHERE d.webhook_id IN (SELECT w.id FROM sync.webhooks w WHERE w.app_id = NEW.app_id)
              AND d.conversation_id = NEW.conversation_id AND d.delivered_at IS NULL AND d.kind = change
              AND d.xmin = pg_current_xact_id()::xid;
            IF NOT FOUND THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, change, NEW.conversation_id, NULL, NULL, NULL,
                    jsonb_build_object('changes', jsonb_build_array(NEW.user_id)));
            END IF;
            IF NOT EXISTS (
                SELECT 1 FROM sync.webhook_deliveries d
                WHERE d.webhook_id IN (SELECT w.id FROM sync.webhooks w WHERE w.app_id = NEW.app_id)
                  AND d.conversation_id = NEW.conversation_id AND d.delivered_at IS NULL
                  AND d.kind = 'conversation.updated.participants' AND d.xmin = pg_current_xact_id()::xid
            ) THEN
                PERFORM sync.record_webhook_event(
                    NEW.app_id, 'conversation.updated.participants', NEW.conversation_id, NULL, NULL, NULL);
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_participant_events AFTER INSERT OR UPDATE OF left_position, read_position
        ON sync.participants FOR EACH ROW EXECUTE FUNCTION sync.webhook_participant_events()
        """,
        """
        CREATE FUNCTION sync.webhook_channel_events() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            kept jsonb := jsonb_build_object('name', NEW.name, 'metadata', NEW.metadata);
        BEGIN
            -- Its name and metadata as they were: the channel may be gone when the event goes out.
            IF TG_OP = 'INSERT' THEN
                PERFORM sync.record_webhook_event(NEW.app_id, 'Channel.created', NEW.id, NULL, NEW.created_by, NULL, kept);
            ELSIF NEW.deleted_at IS NOT NULL AND OLD.deleted_at IS NULL THEN
                PERFORM sync.record_webhook_event(NEW.app_id, 'Channel.deleted', NEW.id, NULL, NULL, NULL, kept);
            ELSIF NEW.metadata IS DISTINCT FROM OLD.metadata THEN
                PERFORM sync.record_webhook_event(NEW.app_id, 'Channel.updated', NEW.id, NULL, NULL, NULL, kept);
            END IF;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_channel_events AFTER INSERT OR UPDATE OF metadata, deleted_at ON sync.channels
        FOR EACH ROW EXECUTE FUNCTION sync.webhook_channel_events()
        """,
        """
        CREATE FUNCTION sync.webhook_membership_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            -- A channel's creator joins it as it is made: that is the channel's creation.
            IF TG_OP = 'INSERT' THEN
                IF NOT EXISTS (
                    SELECT 1 FROM sync.channels c WHERE c.id = NEW.channel_id AND c.created_at >= now()
                ) THEN
                    PERFORM sync.record_webhook_event(
                        NEW.app_id, 'Membership.created', NEW.channel_id, NULL, NULL, NULL,
                        jsonb_build_object('user_id', NEW.user_id, 'role', NEW.role, 'joined_at', NEW.joined_at));
                END IF;
                RETURN NULL;
            END IF;
            PERFORM sync.record_webhook_event(
                OLD.app_id, 'Membership.deleted', OLD.channel_id, NULL, NULL, NULL,
                jsonb_build_object('user_id', OLD.user_id, 'role', OLD.role, 'joined_at', OLD.joined_at));
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER webhook_membership_events AFTER INSERT OR DELETE ON sync.channel_members
        FOR EACH ROW EXECUTE FUNCTION sync.webhook_membership_events()
        """,
    ])
