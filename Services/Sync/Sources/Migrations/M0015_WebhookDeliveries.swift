import LayerServer

/// The webhooks' outbox: one row for each event a webhook listens to, written in the transaction
/// of the change that caused it, and delivered (then kept a while for the delivery log) or retried
/// by the replicas, which take rows under a lease. `kinds` are the events a webhook listens to by
/// their 1.0 names, whatever its version, so that a change records one kind for every version.
let m0015WebhookDeliveries = Migration(
    15, "webhook_deliveries",
    [
        "ALTER TABLE sync.webhooks ADD COLUMN kinds text[] NOT NULL DEFAULT '{}'",
        """
        CREATE TABLE sync.webhook_deliveries (
            id bigserial PRIMARY KEY,
            webhook_id uuid NOT NULL REFERENCES sync.webhooks (id) ON DELETE CASCADE,
            app_id uuid NOT NULL,
            kind text NOT NULL,
            conversation_id uuid,
            message_id uuid,
            actor_id text,
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
        "CREATE INDEX webhooks_listening ON sync.webhooks (app_id) WHERE status <> 'inactive'",
    ])
