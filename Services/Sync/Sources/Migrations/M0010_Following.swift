import LayerServer

/// Who follows whom (reference 4.6). A row is a follow of `followed_id` by `user_id`: explicit
/// (made through the Client or Server API, and undone there) or `implicit`, for everyone the user
/// shares or shared a conversation with, which is for good. Implicit rows are written by a trigger
/// in the transaction that adds a participant, so they never lag behind the conversations.
let m0010Following = Migration(
    10, "following",
    [
        """
        CREATE TABLE sync.follows (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            followed_id text NOT NULL,
            implicit boolean NOT NULL DEFAULT false,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id, followed_id))
        """,
        // Lists come newest first; pushes go to the followers of one user.
        "CREATE INDEX follows_newest ON sync.follows (app_id, user_id, created_at DESC, followed_id DESC)",
        "CREATE INDEX follows_followers ON sync.follows (app_id, followed_id)",
        // A participant who joins (or comes back) follows everyone who is or was in the
        // conversation, and its current participants follow them: the rule by which a user may
        // read another's identity. Pairs go in key order, so that concurrent joins lock alike.
        """
        CREATE FUNCTION sync.follow_fellow_participants() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO sync.follows AS f (app_id, user_id, followed_id, implicit)
            SELECT NEW.app_id, pair.follower, pair.followed, true FROM (
                SELECT NEW.user_id AS follower, o.user_id AS followed FROM sync.participants o
                WHERE o.conversation_id = NEW.conversation_id AND o.user_id <> NEW.user_id
                UNION
                SELECT o.user_id, NEW.user_id FROM sync.participants o
                WHERE o.conversation_id = NEW.conversation_id AND o.user_id <> NEW.user_id AND o.left_position IS NULL
            ) pair
            ORDER BY pair.follower, pair.followed
            ON CONFLICT (app_id, user_id, followed_id) DO UPDATE SET implicit = true WHERE NOT f.implicit;
            RETURN NULL;
        END $$
        """,
        """
        CREATE TRIGGER participants_follow AFTER INSERT ON sync.participants
        FOR EACH ROW EXECUTE FUNCTION sync.follow_fellow_participants()
        """,
        """
        CREATE TRIGGER participants_follow_again AFTER UPDATE OF left_position ON sync.participants
        FOR EACH ROW WHEN (OLD.left_position IS NOT NULL AND NEW.left_position IS NULL)
        EXECUTE FUNCTION sync.follow_fellow_participants()
        """,
        // Conversations from before this migration: the pairs that could read each other's
        // identity then (a removed participant only those who were in it at the removal).
        """
        INSERT INTO sync.follows (app_id, user_id, followed_id, implicit, created_at)
        SELECT a.app_id, a.user_id, b.user_id, true, min(greatest(a.joined_at, b.joined_at))
        FROM sync.participants a
        JOIN sync.participants b ON b.conversation_id = a.conversation_id AND b.user_id <> a.user_id
        WHERE a.left_view IS NULL OR a.left_view -> 'members' @> jsonb_build_array(jsonb_build_object('user_id', b.user_id))
        GROUP BY a.app_id, a.user_id, b.user_id
        """,
    ])
