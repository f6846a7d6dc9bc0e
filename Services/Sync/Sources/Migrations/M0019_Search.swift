import LayerServer

/// Search and off-the-record messages. Every message keeps the words of its text parts as a
/// `tsvector`, computed by PostgreSQL with the write (a stored generated column, so a send, a
/// resend and a change of parts all keep it current) and indexed by GIN. The `simple`
/// configuration with `unaccent` works for any language: words are lower-cased and stripped of
/// accents, never stemmed or dropped as stop words. An off-the-record message is never indexed.
let m0019Search = Migration(
    19, "search",
    [
        "ALTER TABLE sync.messages ADD COLUMN off_the_record boolean NOT NULL DEFAULT false",
        "ALTER TABLE sync.scheduled_messages ADD COLUMN off_the_record boolean NOT NULL DEFAULT false",
        // `unaccent` is a trusted extension: the database's owner may create it. Its function is
        // only STABLE (its dictionary could be changed), so an IMMUTABLE wrapper that names the
        // dictionary, in whichever schema the extension lives, is what an index may use.
        """
        DO $migration$
        DECLARE
            home text;
        BEGIN
            CREATE EXTENSION IF NOT EXISTS unaccent;
            SELECT n.nspname INTO home FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
            WHERE e.extname = 'unaccent';
            EXECUTE format(
                'CREATE FUNCTION sync.unaccented(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT '
                || 'AS $body$ SELECT %I.unaccent(%L::regdictionary, $1) $body$',
                home, home || '.unaccent');
        END $migration$
        """,
        // The words of a message: the bodies of its text parts (`text/…`, not base64). PL/pgSQL,
        // whose plans last the session: an SQL function in a generated column was planned again
        // for every row inserted, 115 µs a message against 30.
        """
        CREATE FUNCTION sync.message_words(parts jsonb, off_the_record boolean) RETURNS tsvector
        LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
        DECLARE
            part jsonb;
            words text := '';
        BEGIN
            IF off_the_record OR jsonb_typeof(parts) <> 'array' THEN RETURN NULL; END IF;
            FOR part IN SELECT jsonb_array_elements(parts) LOOP
                IF part ->> 'mime_type' ILIKE 'text/%' AND part ->> 'encoding' IS NULL AND part ? 'body' THEN
                    words := words || ' ' || (part ->> 'body');
                END IF;
            END LOOP;
            RETURN to_tsvector('pg_catalog.simple'::regconfig, sync.unaccented(words));
        END $$
        """,
        """
        ALTER TABLE sync.messages ADD COLUMN words tsvector
            GENERATED ALWAYS AS (sync.message_words(parts, off_the_record)) STORED
        """,
        "CREATE INDEX messages_words ON sync.messages USING gin (words)",
    ])
