import LayerServer

/// Signals that devices connecting later must still get: a call ringing reaches a phone switched
/// on while it rings. Each is kept per user under a key its sender chose (`call:<id>`) until a
/// time; a later signal under the same key replaces or clears it.
let m0005ReplayedSignals = Migration(
    5, "replayed_signals",
    [
        """
        CREATE TABLE sync.replayed_signals (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            key text NOT NULL,
            signal text NOT NULL,
            until timestamptz NOT NULL,
            PRIMARY KEY (app_id, user_id, key))
        """,
        "CREATE INDEX replayed_signals_until ON sync.replayed_signals (until)",
    ])
