import LayerServer

/// The apps' webhooks: where each sends which events, in which version, signed with which secret
/// (sealed, see ``SealedSecrets``), and where its verification stands. `verification` counts the
/// verifications asked for (on registration and on each activation); a verifier records its answer
/// only for the one it was sent for. `verify_after` is when an unverified webhook is due for its
/// challenge (a replica taking it moves it on by a lease).
let m0014Webhooks = Migration(
    14, "webhooks",
    [
        """
        CREATE TABLE sync.webhooks (
            id uuid PRIMARY KEY,
            app_id uuid NOT NULL,
            version text NOT NULL,
            target_url text NOT NULL,
            events text[] NOT NULL,
            secret bytea NOT NULL,
            config jsonb,
            status text NOT NULL DEFAULT 'unverified' CHECK (status IN ('unverified', 'active', 'inactive')),
            status_reason text,
            verification bigint NOT NULL DEFAULT 1,
            verify_after timestamptz,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now()
        )
        """,
        "CREATE INDEX webhooks_by_app ON sync.webhooks (app_id, created_at, id)",
        "CREATE INDEX webhooks_to_verify ON sync.webhooks (verify_after) WHERE status = 'unverified'",
    ])
