import LayerServer

/// The voip schema's migrations, in the order they apply. A change to the schema is a new
/// numbered file here and one more entry in this list; a released migration is never edited.
let voipMigrations = MigrationRunner(schema: "voip", migrations: [m0001CreateVoIPSchema])
