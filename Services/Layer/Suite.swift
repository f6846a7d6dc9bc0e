import LayerAuth
import LayerServer
import PostgresNIO

/// Every service of the suite, for the commands that serve or migrate all of them at once.
struct Suite {
    let auth: AuthService

    init(auth: AuthSettings, server: ServerSettings, postgres: PostgresClient) {
        self.auth = AuthService(settings: auth, server: server, postgres: postgres)
    }

    var services: [any LayerService] { [auth] }
}
