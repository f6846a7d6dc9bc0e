import LayerServer

/// Who vouched for each entry, and what the owner of a person decided about entries others
/// attached (issue 25: the store believes only what is proven).
///
/// Tier 1 already says who sent an entry (`submitted_by`: a user, or null for the app's backend)
/// and whether it came from an address book (`book_id`). Tier 2 now carries it too: each
/// entry's submitter in `person_entries`, and for each address of a person whether the app's
/// backend stated it and which users did, so that confidence counts submitters (not entries)
/// and a person is shown to a caller with only the addresses that caller submitted. The
/// backfill below gives existing rows what the linker now writes; `verified` keeps only what
/// the app's backend verified.
///
/// Claims get an order of their own: the owner of a person is the user who claimed it first.
/// `detached_entries` holds the entries an owner took out of their person: such an entry makes
/// a person of its own (`persons.isolated`) that nothing links to.
let m0002RecordProvenance = Migration(
    2, "record_provenance",
    [
        "ALTER TABLE names.person_entries ADD COLUMN submitted_by text",
        """
        UPDATE names.person_entries pe SET submitted_by = e.submitted_by
        FROM names.entries e WHERE e.app_id = pe.app_id AND e.id = pe.entry_id
        """,
        "ALTER TABLE names.addresses ADD COLUMN from_app boolean NOT NULL DEFAULT false",
        "ALTER TABLE names.addresses ADD COLUMN submitters text[] NOT NULL DEFAULT '{}'",
        """
        UPDATE names.addresses a SET
            from_app = EXISTS (
                SELECT 1 FROM names.person_entries pe, jsonb_array_elements(pe.record -> 'record' -> 'addresses') x
                WHERE pe.app_id = a.app_id AND pe.person_id = a.person_id AND pe.submitted_by IS NULL
                  AND x ->> 'type' = a.type AND x ->> 'value' = a.value),
            verified = EXISTS (
                SELECT 1 FROM names.person_entries pe, jsonb_array_elements(pe.record -> 'record' -> 'addresses') x
                WHERE pe.app_id = a.app_id AND pe.person_id = a.person_id AND pe.submitted_by IS NULL
                  AND x ->> 'type' = a.type AND x ->> 'value' = a.value AND (x -> 'verified') = 'true'::jsonb),
            submitters = ARRAY(
                SELECT DISTINCT pe.submitted_by
                FROM names.person_entries pe, jsonb_array_elements(pe.record -> 'record' -> 'addresses') x
                WHERE pe.app_id = a.app_id AND pe.person_id = a.person_id AND pe.submitted_by IS NOT NULL
                  AND x ->> 'type' = a.type AND x ->> 'value' = a.value ORDER BY 1)
        """,
        "UPDATE names.addresses SET sources = cardinality(submitters) + CASE WHEN from_app THEN 1 ELSE 0 END",
        "ALTER TABLE names.persons ADD COLUMN isolated boolean NOT NULL DEFAULT false",
        "ALTER TABLE names.claims ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY",
        "CREATE UNIQUE INDEX claims_in_order ON names.claims (app_id, seq)",
        """
        CREATE TABLE names.detached_entries (
            app_id uuid NOT NULL,
            entry_id uuid NOT NULL,
            detached_by text NOT NULL,
            detached_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, entry_id))
        """,
    ])
