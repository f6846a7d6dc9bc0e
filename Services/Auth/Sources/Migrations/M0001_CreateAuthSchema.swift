import LayerServer

/// Apps and their identity providers and keys, Server API tokens, nonces, users, sessions, and the
/// device CA with the certificates it issued.
let m0001CreateAuthSchema = Migration(
    1, "create_auth_schema",
    [
        """
        CREATE TABLE auth.apps (
            id uuid PRIMARY KEY,
            name text NOT NULL,
            session_ttl_seconds integer NOT NULL DEFAULT 2592000,
            require_certified boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE auth.providers (
            id uuid PRIMARY KEY,
            app_id uuid NOT NULL REFERENCES auth.apps (id) ON DELETE CASCADE,
            name text,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX providers_app ON auth.providers (app_id)",
        """
        CREATE TABLE auth.keys (
            id uuid PRIMARY KEY,
            app_id uuid NOT NULL REFERENCES auth.apps (id) ON DELETE CASCADE,
            provider_id uuid NOT NULL REFERENCES auth.providers (id) ON DELETE CASCADE,
            public_key_pem text NOT NULL,
            enabled boolean NOT NULL DEFAULT true,
            deleted_at timestamptz,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
        "CREATE INDEX keys_app ON auth.keys (app_id)",
        """
        CREATE TABLE auth.app_tokens (
            id uuid PRIMARY KEY,
            app_id uuid NOT NULL REFERENCES auth.apps (id) ON DELETE CASCADE,
            token_hash bytea NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now(),
            revoked_at timestamptz)
        """,
        """
        CREATE TABLE auth.nonces (
            nonce text PRIMARY KEY,
            expires_at timestamptz NOT NULL)
        """,
        "CREATE INDEX nonces_expiry ON auth.nonces (expires_at)",
        """
        CREATE TABLE auth.users (
            app_id uuid NOT NULL REFERENCES auth.apps (id) ON DELETE CASCADE,
            user_id text NOT NULL,
            display_name text,
            avatar_url text,
            first_name text,
            last_name text,
            suspended boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id))
        """,
        """
        CREATE TABLE auth.certificates (
            id uuid PRIMARY KEY,
            serial text NOT NULL UNIQUE,
            thumbprint text NOT NULL UNIQUE,
            device_id text NOT NULL,
            user_agent text,
            certificate_pem text NOT NULL,
            issued_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            revoked_at timestamptz)
        """,
        """
        CREATE TABLE auth.sessions (
            id uuid PRIMARY KEY,
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            token_hash bytea NOT NULL UNIQUE,
            created_at timestamptz NOT NULL DEFAULT now(),
            expires_at timestamptz NOT NULL,
            challenged_at timestamptz,
            revoked_at timestamptz,
            certificate_thumbprint text REFERENCES auth.certificates (thumbprint),
            FOREIGN KEY (app_id, user_id) REFERENCES auth.users (app_id, user_id) ON DELETE CASCADE)
        """,
        "CREATE INDEX sessions_user ON auth.sessions (app_id, user_id)",
        "CREATE INDEX sessions_expiry ON auth.sessions (expires_at)",
        """
        CREATE TABLE auth.device_ca (
            id integer PRIMARY KEY CHECK (id = 1),
            certificate_pem text NOT NULL,
            sealed_key bytea NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now())
        """,
    ])
