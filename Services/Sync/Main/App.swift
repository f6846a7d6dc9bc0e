import Foundation
import LayerServer
import LayerSync
import Logging

/// `layer-sync`: the sync service on its own, configured by the environment. It reaches the auth
/// service at LAYER_AUTH_URL.
@main
struct SyncMain {
    static func main() async throws {
        Observability.bootstrapLogging()
        let logger = Logger(label: "layer-sync")
        var reader = SettingsReader()
        let server = ServerSettings.read(&reader, defaultPort: 8082, requireDatabase: true)
        let sync = SyncSettings.read(&reader)
        do {
            try reader.validate("layer-sync")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        }
        let postgres = server.database!.makeClient(logger: logger)
        let authURL = server.authURL
        let service = SyncService(settings: sync, server: server, postgres: postgres, authURL: { authURL })
        let app = try buildApplication(
            services: [service], settings: server, postgres: postgres,
            tls: try makeServerTLS(settings: server, verifyClient: { _ in false }), logger: logger)
        try await app.runService()
    }
}
