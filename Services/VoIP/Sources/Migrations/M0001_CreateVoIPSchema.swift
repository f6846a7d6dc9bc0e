import LayerServer

/// Calls, from the ring to how they ended.
///
/// A call's row is its whole state: every transition is one `UPDATE … WHERE state = <expected>`,
/// so two replicas (or ten devices answering at once) can never both move a call, and the ring
/// timeout fires once because only one `UPDATE` finds the call still ringing. `signalled_state`
/// is the last state the parties' devices were told of: a change whose signal was lost (a
/// replica stopped right after the move) is signalled again by any replica. The tokens and
/// candidates are what each side needs of the other to get through NAT; only the two parties
/// ever read them.
let m0001CreateVoIPSchema = Migration(
    1, "create_voip_schema",
    [
        """
        CREATE TABLE voip.calls (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            caller text NOT NULL,
            callee text NOT NULL,
            media text NOT NULL CHECK (media IN ('audio', 'video')),
            state text NOT NULL CHECK (state IN ('ringing', 'answered', 'rejected', 'cancelled', 'missed', 'ended')),
            caller_token text NOT NULL,
            caller_candidates jsonb NOT NULL,
            callee_token text,
            callee_candidates jsonb,
            answered_device text,
            created_at timestamptz NOT NULL DEFAULT now(),
            ring_deadline timestamptz NOT NULL,
            answered_at timestamptz,
            ended_at timestamptz,
            ended_by text,
            caller_was_online boolean NOT NULL DEFAULT false,
            caller_gone_since timestamptz,
            signalled_state text,
            PRIMARY KEY (app_id, id))
        """,
        "CREATE INDEX calls_unsignalled ON voip.calls (app_id, id) WHERE signalled_state IS DISTINCT FROM state",
        "CREATE INDEX calls_of_caller ON voip.calls (app_id, caller, created_at DESC, id DESC)",
        "CREATE INDEX calls_of_callee ON voip.calls (app_id, callee, created_at DESC, id DESC)",
        "CREATE INDEX calls_ringing ON voip.calls (ring_deadline) WHERE state = 'ringing'",
    ])
