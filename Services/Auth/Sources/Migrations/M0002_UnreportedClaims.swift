import LayerServer

/// The identity-token claims the sync service has yet to be told of: a row per user whose
/// sign-in could not be reported at once (or is being reported), holding the claims of every
/// such sign-in merged in order (a later claim replaces an earlier one, an absent one keeps it),
/// a version that each sign-in raises, so a report clears only what it carried, and the time of
/// the latest of those sign-ins, so that the sync service never lets them undo a newer edit. The reporter
/// retries each row at `next_attempt_at`, later after every failed attempt.
let m0002UnreportedClaims = Migration(
    2, "unreported_claims",
    [
        """
        CREATE TABLE auth.unreported_claims (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            display_name text,
            avatar_url text,
            first_name text,
            last_name text,
            version bigint NOT NULL DEFAULT 1,
            signed_in_at timestamptz NOT NULL DEFAULT now(),
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at timestamptz NOT NULL DEFAULT now(),
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id),
            FOREIGN KEY (app_id, user_id) REFERENCES auth.users (app_id, user_id) ON DELETE CASCADE)
        """,
        "CREATE INDEX unreported_claims_due ON auth.unreported_claims (next_attempt_at)",
    ])
