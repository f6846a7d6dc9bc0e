import LayerAuth
import LayerServer
import LayerSync
import PostgresNIO

/// Every service of the suite, for the commands that serve or migrate all of them at once. In one
/// process they still call each other over HTTP, on the suite's own listener (`selfURL`).
struct Suite {
    let auth: AuthService
    let sync: SyncService

    init(auth: AuthSettings, sync: SyncSettings, server: ServerSettings, postgres: PostgresClient, selfURL: LateBoundURL) {
        self.auth = AuthService(settings: auth, server: server, postgres: postgres)
        self.sync = SyncService(settings: sync, server: server, postgres: postgres, authURL: { selfURL.get() })
    }

    var services: [any LayerService] { [auth, sync] }
}

extension Suite {
    /// Each service's OpenAPI document, in the order of `services`. Building the services needs a
    /// database; their documents do not.
    static var openAPIDocuments: [(name: String, document: String)] {
        [("auth", AuthService.openAPIDocument), ("sync", SyncService.openAPIDocument)]
    }
}
