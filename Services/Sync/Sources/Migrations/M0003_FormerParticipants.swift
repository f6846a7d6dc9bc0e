import LayerServer

/// What a removed participant keeps: the conversation as it was when they left it. `left_at` is
/// the moment, `left_view` the conversation's metadata then and every other participant with
/// their read and delivered marks and where they had left, if they had, then (`{"metadata",
/// "members": [{"user_id", "read", "delivered", "left"}]}`); receipts record when they reached delivered and read, so that the statuses
/// a removed participant sees stop at their removal too.
let m0003FormerParticipants = Migration(
    3, "former_participants",
    [
        "ALTER TABLE sync.participants ADD COLUMN left_at timestamptz, ADD COLUMN left_view jsonb",
        "ALTER TABLE sync.receipts ADD COLUMN delivered_at timestamptz, ADD COLUMN read_at timestamptz",
        "UPDATE sync.receipts SET delivered_at = updated_at, read_at = CASE WHEN status = 2 THEN updated_at END",
        // Participants removed before this migration keep the conversation as it is now.
        """
        UPDATE sync.participants p SET left_at = now(), left_view = jsonb_build_object(
            'metadata', (SELECT c.metadata FROM sync.conversations c WHERE c.id = p.conversation_id),
            'members', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'user_id', o.user_id, 'read', o.read_position, 'delivered', o.delivered_position,
                    'left', o.left_position)), '[]')
                FROM sync.participants o WHERE o.conversation_id = p.conversation_id AND o.user_id <> p.user_id))
        WHERE p.left_position IS NOT NULL
        """,
    ])
