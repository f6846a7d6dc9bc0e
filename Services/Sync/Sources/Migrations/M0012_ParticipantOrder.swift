import LayerServer

/// Participants keep the order they were given in: each row has its place in its conversation
/// (`ordinal`), the creator's list first and those added later after them, in the order added (one
/// who comes back goes to the end). Existing conversations keep the order they were shown in until
/// now: by join time, then user id.
let m0012ParticipantOrder = Migration(
    12, "participant_order",
    [
        "ALTER TABLE sync.participants ADD COLUMN ordinal integer",
        """
        UPDATE sync.participants p SET ordinal = o.n
        FROM (SELECT conversation_id, user_id,
                row_number() OVER (PARTITION BY conversation_id ORDER BY joined_at, user_id) AS n
            FROM sync.participants) o
        WHERE o.conversation_id = p.conversation_id AND o.user_id = p.user_id
        """,
        "ALTER TABLE sync.participants ALTER COLUMN ordinal SET NOT NULL",
        // Every insert takes the next place, whoever writes it: rows inserted by one statement are
        // numbered in the order the statement gives them (a row trigger sees the rows before it).
        // A participant who comes back (an insert that meets the existing row) takes it too.
        """
        CREATE FUNCTION sync.next_participant_ordinal() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.ordinal := (SELECT coalesce(max(ordinal), 0) + 1 FROM sync.participants
                WHERE conversation_id = NEW.conversation_id);
            RETURN NEW;
        END $$
        """,
        """
        CREATE TRIGGER participants_ordinal BEFORE INSERT ON sync.participants
        FOR EACH ROW EXECUTE FUNCTION sync.next_participant_ordinal()
        """,
    ])
