import Foundation
import LayerAuth
import LayerServer
import Logging

/// `layer-auth`: the auth service on its own, configured by the environment.
@main
struct AuthMain {
    static func main() async throws {
        Observability.bootstrapLogging()
        let logger = Logger(label: "layer-auth")
        var reader = SettingsReader()
        let server = ServerSettings.read(&reader, defaultPort: 8081, requireDatabase: true)
        let auth = AuthSettings.read(&reader)
        do {
            try reader.validate("layer-auth")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        }
        let postgres = server.database!.makeClient(logger: logger)
        let service = AuthService(settings: auth, server: server, postgres: postgres)
        let app = try buildApplication(
            services: [service], settings: server, postgres: postgres,
            tls: try makeServerTLS(settings: server, verifyClient: service.isDeviceCertificate), logger: logger)
        try await app.runService()
    }
}
