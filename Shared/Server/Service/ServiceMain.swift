import Foundation
import Logging
import ServiceLifecycle

/// The `@main` of `layer-<service>`: one service alone, configured by the environment.
public enum ServiceMain {
    /// Reads the shared and the service's own settings (exiting with status 78 and the list of
    /// every missing or malformed setting when they do not do), then serves until SIGTERM.
    public static func run<S: ConfigurableService>(_ service: S.Type) async throws {
        Observability.bootstrapLogging()
        let logger = Logger(label: S.executable)
        var reader = SettingsReader()
        let server = ServerSettings.read(
            &reader, defaultPort: S.defaultPort, requireDatabase: true, tokensOf: [S.name] + S.internalCallers)
        let plan = S.configured(from: &reader)
        do {
            try reader.validate(S.executable)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(78)
        }
        // Each WebSocket or event stream holds a descriptor; the soft limit would cap them at ~1,000.
        raiseOpenFileLimit()
        let postgres = server.database!.makeClient(logger: logger)
        let app = try buildApplication([plan], settings: server, postgres: postgres, logger: logger)
        try await ServiceGroup(configuration: .layer(app, settings: server, logger: logger)).run()
    }
}
