import LayerServer

/// Each participant's count of the messages they see and of those they have not read, kept in
/// their row by triggers in the transaction of every write that changes either, so that a
/// conversation, a snapshot, a push or a badge reads two numbers instead of counting the history.
///
/// A participant counts the messages ``messageVisibleToParticipant`` lets them see; unread are
/// those after their read position, not their own, without a read receipt of theirs.
/// `sync.count_messages` is that definition over a participant's positions. The writes that can
/// change a count are all monotonic (a message is sent, deleted for everybody, tagged `deleted` by
/// one participant, read by one), and each moves it by one for the participants concerned. A
/// participant whose positions change (joining, leaving, clearing, marking read) or who blocks or
/// unblocks a sender is counted again; those are rare, and a new read position only counts what
/// follows it.
let m0008ParticipantCounts = Migration(
    8, "participant_counts",
    [
        """
        ALTER TABLE sync.participants
            ADD COLUMN message_count bigint NOT NULL DEFAULT 0,
            ADD COLUMN unread_count bigint NOT NULL DEFAULT 0
        """,
        // The definition: the messages of `conversation` that participant `member` sees with these
        // positions, and how many of them are unread (all of them when `only_unread`, which
        // counts only those after `read_position` and leaves the total at 0).
        """
        CREATE FUNCTION sync.count_messages(
            p_app uuid, p_conversation uuid, p_user text, p_cleared bigint, p_left bigint, p_read bigint,
            only_unread boolean, OUT total bigint, OUT unread bigint)
        LANGUAGE sql STABLE AS $$
            SELECT count(*),
                   count(*) FILTER (WHERE m.position > p_read AND m.sender_id IS DISTINCT FROM p_user
                       AND NOT EXISTS (SELECT 1 FROM sync.receipts r
                           WHERE r.message_id = m.id AND r.user_id = p_user AND r.status = 2))
            FROM sync.messages m
            WHERE m.conversation_id = p_conversation
              AND m.position > CASE WHEN only_unread THEN greatest(p_cleared, p_read) ELSE p_cleared END
              AND (p_left IS NULL OR m.position <= p_left)
              AND m.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM sync.message_tags t
                  WHERE t.message_id = m.id AND t.user_id = p_user AND 'deleted' = ANY(t.tags))
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = p_app AND b.owner_id = p_user AND b.blocked_id = m.sender_id)
        $$
        """,
        // A participant who joins, or whose positions change, is counted (again).
        """
        CREATE FUNCTION sync.participant_positions_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE counted record;
        BEGIN
            IF TG_OP = 'INSERT' OR NEW.cleared_position IS DISTINCT FROM OLD.cleared_position
                OR NEW.left_position IS DISTINCT FROM OLD.left_position THEN
                counted := sync.count_messages(NEW.app_id, NEW.conversation_id, NEW.user_id, NEW.cleared_position,
                    NEW.left_position, NEW.read_position, false);
                NEW.message_count := counted.total;
                NEW.unread_count := counted.unread;
            ELSIF NEW.read_position IS DISTINCT FROM OLD.read_position THEN
                counted := sync.count_messages(NEW.app_id, NEW.conversation_id, NEW.user_id, NEW.cleared_position,
                    NEW.left_position, NEW.read_position, true);
                NEW.unread_count := counted.unread;
            END IF;
            RETURN NEW;
        END
        $$
        """,
        """
        CREATE TRIGGER participants_count BEFORE INSERT OR UPDATE OF cleared_position, left_position, read_position
        ON sync.participants FOR EACH ROW EXECUTE FUNCTION sync.participant_positions_changed()
        """,
        // A new message counts for every participant whose window holds it and who has not
        // blocked its sender; unread for all of them but its sender. Once per statement, so that
        // a statement that writes many messages moves each participant's counts once.
        """
        CREATE FUNCTION sync.messages_sent() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE sync.participants p SET message_count = p.message_count + n.total,
                unread_count = p.unread_count + n.unread
            FROM (
                SELECT q.conversation_id, q.user_id, count(*) AS total,
                    count(*) FILTER (WHERE m.sender_id IS DISTINCT FROM q.user_id AND m.position > q.read_position) AS unread
                FROM sent m JOIN sync.participants q ON q.conversation_id = m.conversation_id
                WHERE m.position > q.cleared_position AND (q.left_position IS NULL OR m.position <= q.left_position)
                  AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                      WHERE b.app_id = q.app_id AND b.owner_id = q.user_id AND b.blocked_id = m.sender_id)
                GROUP BY q.conversation_id, q.user_id) AS n
            WHERE p.conversation_id = n.conversation_id AND p.user_id = n.user_id;
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER messages_count AFTER INSERT ON sync.messages REFERENCING NEW TABLE AS sent
        FOR EACH STATEMENT EXECUTE FUNCTION sync.messages_sent()
        """,
        // A message deleted for everybody stops counting for everyone who counted it.
        """
        CREATE FUNCTION sync.message_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE sync.participants p SET message_count = p.message_count - 1,
                unread_count = p.unread_count
                    - CASE WHEN OLD.position > p.read_position AND OLD.sender_id IS DISTINCT FROM p.user_id
                        AND NOT EXISTS (SELECT 1 FROM sync.receipts r
                            WHERE r.message_id = OLD.id AND r.user_id = p.user_id AND r.status = 2)
                      THEN 1 ELSE 0 END
            WHERE p.conversation_id = OLD.conversation_id
              AND OLD.position > p.cleared_position AND (p.left_position IS NULL OR OLD.position <= p.left_position)
              AND NOT EXISTS (SELECT 1 FROM sync.message_tags t
                  WHERE t.message_id = OLD.id AND t.user_id = p.user_id AND 'deleted' = ANY(t.tags))
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = p.app_id AND b.owner_id = p.user_id AND b.blocked_id = OLD.sender_id);
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER messages_deleted_count AFTER UPDATE OF deleted_at ON sync.messages
        FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
        EXECUTE FUNCTION sync.message_deleted()
        """,
        // A message one participant deletes from their devices stops counting for them.
        """
        CREATE FUNCTION sync.message_tagged_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT ('deleted' = ANY(NEW.tags)) OR (TG_OP = 'UPDATE' AND 'deleted' = ANY(OLD.tags)) THEN
                RETURN NULL;
            END IF;
            UPDATE sync.participants p SET message_count = p.message_count - 1,
                unread_count = p.unread_count
                    - CASE WHEN m.position > p.read_position AND m.sender_id IS DISTINCT FROM p.user_id
                        AND NOT EXISTS (SELECT 1 FROM sync.receipts r
                            WHERE r.message_id = m.id AND r.user_id = p.user_id AND r.status = 2)
                      THEN 1 ELSE 0 END
            FROM sync.messages m
            WHERE m.id = NEW.message_id AND p.conversation_id = m.conversation_id AND p.user_id = NEW.user_id
              AND m.deleted_at IS NULL
              AND m.position > p.cleared_position AND (p.left_position IS NULL OR m.position <= p.left_position)
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = p.app_id AND b.owner_id = p.user_id AND b.blocked_id = m.sender_id);
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER message_tags_count AFTER INSERT OR UPDATE OF tags ON sync.message_tags
        FOR EACH ROW EXECUTE FUNCTION sync.message_tagged_deleted()
        """,
        // A message its reader marks read is no longer unread for them.
        """
        CREATE FUNCTION sync.receipt_read() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.status < 2 OR (TG_OP = 'UPDATE' AND OLD.status >= 2) THEN
                RETURN NULL;
            END IF;
            UPDATE sync.participants p SET unread_count = p.unread_count - 1
            FROM sync.messages m
            WHERE m.id = NEW.message_id AND p.conversation_id = m.conversation_id AND p.user_id = NEW.user_id
              AND m.position > p.read_position AND m.sender_id IS DISTINCT FROM p.user_id
              AND m.deleted_at IS NULL
              AND m.position > p.cleared_position AND (p.left_position IS NULL OR m.position <= p.left_position)
              AND NOT EXISTS (SELECT 1 FROM sync.message_tags t
                  WHERE t.message_id = m.id AND t.user_id = p.user_id AND 'deleted' = ANY(t.tags))
              AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                  WHERE b.app_id = p.app_id AND b.owner_id = p.user_id AND b.blocked_id = m.sender_id);
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER receipts_count AFTER INSERT OR UPDATE OF status ON sync.receipts
        FOR EACH ROW EXECUTE FUNCTION sync.receipt_read()
        """,
        // Blocking or unblocking a sender recounts the blocker's conversations that hold their messages.
        """
        CREATE FUNCTION sync.block_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE changed sync.blocks;
        BEGIN
            IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
            UPDATE sync.participants p SET (message_count, unread_count) = (
                SELECT c.total, c.unread FROM sync.count_messages(p.app_id, p.conversation_id, p.user_id,
                    p.cleared_position, p.left_position, p.read_position, false) c)
            WHERE p.app_id = changed.app_id AND p.user_id = changed.owner_id
              AND EXISTS (SELECT 1 FROM sync.messages m
                  WHERE m.conversation_id = p.conversation_id AND m.sender_id = changed.blocked_id);
            RETURN NULL;
        END
        $$
        """,
        """
        CREATE TRIGGER blocks_count AFTER INSERT OR DELETE ON sync.blocks
        FOR EACH ROW EXECUTE FUNCTION sync.block_changed()
        """,
        // The counts of the participants there already.
        """
        UPDATE sync.participants p SET (message_count, unread_count) = (
            SELECT c.total, c.unread FROM sync.count_messages(p.app_id, p.conversation_id, p.user_id,
                p.cleared_position, p.left_position, p.read_position, false) c)
        """,
    ])
