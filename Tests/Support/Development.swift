// The tests use what `layer dev` uses (a private PostgreSQL, child processes, a backend's token
// signer): every test target that imports the test support has it too.
@_exported import LayerDevelopment
