import LayerServer

/// The auth schema's migrations, in the order they apply. A change to the schema is a new
/// numbered file here and one more entry in this list; a released migration is never edited.
let authMigrations = MigrationRunner(
    schema: "auth", migrations: [m0001CreateAuthSchema, m0002UnreportedClaims, m0003AllowedOrigins])
