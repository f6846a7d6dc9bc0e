import LayerServer

/// Each app's own match model, estimated by EM on a sample of its store once the store is large
/// enough (``PersonLinker/model(app:stored:_:_:)``). Tier 2: computed from the entries, dropped with
/// the persons when the store is computed again.
let m0003AppModels = Migration(
    3, "app_models",
    [
        """
        CREATE TABLE names.app_models (
            app_id uuid PRIMARY KEY,
            persons integer NOT NULL,
            model jsonb NOT NULL,
            estimated_at timestamptz NOT NULL DEFAULT now())
        """
    ])
