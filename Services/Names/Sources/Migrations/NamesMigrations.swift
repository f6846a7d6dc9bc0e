import LayerServer

/// The names schema's migrations, in the order they apply. A change to the schema is a new
/// numbered file here and one more entry in this list; a released migration is never edited.
let namesMigrations = MigrationRunner(
    schema: "names", migrations: [m0001CreateNamesSchema, m0002RecordProvenance, m0003AppModels])
