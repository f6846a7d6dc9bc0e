import LayerServer

/// The web origins each app lets browsers call the suite from (CORS), as the operator wrote them.
let m0003AllowedOrigins = Migration(
    3, "allowed_origins",
    ["ALTER TABLE auth.apps ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}'"])
