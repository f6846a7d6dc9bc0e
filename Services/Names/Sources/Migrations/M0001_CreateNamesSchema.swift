import LayerServer

/// The three tiers of an app's persons store, the policy people set on their own records, address
/// books and the relationship graph.
///
/// Tier 1 (`entries`) keeps every record exactly as it was submitted and is never updated. Tier 2
/// (`persons`, `person_entries`, `blocks`, `matches`) is computed from it and can be dropped and
/// computed again. Tier 3 (`addresses`) resolves an address to the persons that hold it. What
/// people decide about their records (`claims`, `address_policies`) is keyed by their user id and
/// the address, not by a computed person, so it survives a recomputation.
let m0001CreateNamesSchema = Migration(
    1, "create_names_schema",
    [
        """
        CREATE TABLE names.app_settings (
            app_id uuid PRIMARY KEY,
            default_region text NOT NULL,
            updated_at timestamptz NOT NULL DEFAULT now())
        """,
        """
        CREATE TABLE names.entries (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            seq bigserial NOT NULL UNIQUE,
            book_id uuid,
            submitted_by text,
            region text NOT NULL,
            body jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, id))
        """,
        "CREATE INDEX entries_by_app ON names.entries (app_id, seq)",
        """
        CREATE TABLE names.persons (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            first_seq bigint NOT NULL,
            record jsonb NOT NULL,
            features jsonb NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, id))
        """,
        """
        CREATE TABLE names.person_entries (
            app_id uuid NOT NULL,
            entry_id uuid NOT NULL,
            person_id uuid NOT NULL,
            seq bigint NOT NULL,
            from_contact boolean NOT NULL,
            record jsonb NOT NULL,
            PRIMARY KEY (app_id, entry_id))
        """,
        "CREATE INDEX person_entries_by_person ON names.person_entries (app_id, person_id, seq)",
        """
        CREATE TABLE names.addresses (
            app_id uuid NOT NULL,
            type text NOT NULL,
            value text NOT NULL,
            person_id uuid NOT NULL,
            verified boolean NOT NULL,
            sources integer NOT NULL,
            contact_sources integer NOT NULL,
            PRIMARY KEY (app_id, type, value, person_id))
        """,
        "CREATE INDEX addresses_by_person ON names.addresses (app_id, person_id)",
        """
        CREATE TABLE names.blocks (
            app_id uuid NOT NULL,
            key text NOT NULL,
            person_id uuid NOT NULL,
            PRIMARY KEY (app_id, key, person_id))
        """,
        "CREATE INDEX blocks_by_person ON names.blocks (app_id, person_id)",
        """
        CREATE TABLE names.matches (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            a uuid NOT NULL,
            b uuid NOT NULL,
            probability double precision NOT NULL,
            evidence jsonb NOT NULL,
            PRIMARY KEY (app_id, id),
            UNIQUE (app_id, a, b),
            CHECK (a < b))
        """,
        "CREATE INDEX matches_by_probability ON names.matches (app_id, probability DESC, id)",
        "CREATE INDEX matches_by_b ON names.matches (app_id, b)",
        """
        CREATE TABLE names.claims (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            barred_apps uuid[] NOT NULL DEFAULT '{}',
            claimed_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id))
        """,
        """
        CREATE TABLE names.address_policies (
            app_id uuid NOT NULL,
            user_id text NOT NULL,
            type text NOT NULL,
            value text NOT NULL,
            policy text NOT NULL DEFAULT 'public' CHECK (policy IN ('public', 'known_only')),
            removed boolean NOT NULL DEFAULT false,
            hidden boolean NOT NULL DEFAULT false,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, user_id, type, value))
        """,
        """
        CREATE TABLE names.address_books (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            owner_id text,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, id))
        """,
        """
        CREATE TABLE names.contacts (
            app_id uuid NOT NULL,
            id uuid NOT NULL,
            book_id uuid NOT NULL,
            position integer NOT NULL,
            entry_id uuid NOT NULL,
            record jsonb NOT NULL,
            merged_into uuid,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, id))
        """,
        "CREATE INDEX contacts_by_book ON names.contacts (app_id, book_id, position)",
        """
        CREATE TABLE names.relationships (
            app_id uuid NOT NULL,
            a text NOT NULL,
            b text NOT NULL,
            messages bigint NOT NULL DEFAULT 0,
            calls bigint NOT NULL DEFAULT 0,
            last_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (app_id, a, b),
            CHECK (a < b))
        """,
    ])
