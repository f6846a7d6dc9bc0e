import ArgumentParser
import LayerServer
import LayerSuite
import Logging

/// `layer migrate`: apply every service's migrations to LAYER_DATABASE_URL and exit.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Apply every service's database migrations and exit.")

    func run() async throws {
        Observability.bootstrapLogging()
        let logger = Logger(label: "layer-migrate")
        var reader = SettingsReader()
        let server = ServerSettings.read(&reader, defaultPort: 0, requireDatabase: false)
        guard let database = server.database else {
            throw ValidationError("Set LAYER_DATABASE_URL to the database to migrate.")
        }
        try reader.validate("layer migrate")
        let postgres = database.makeClient(logger: logger)
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await postgres.run() }
            for service in Suite.services {
                let applied = try await service.migrations.run(on: postgres, logger: logger)
                print(
                    "\(service.name): \(applied.isEmpty ? "up to date" : "applied \(applied.map(String.init).joined(separator: ", "))")"
                )
            }
            group.cancelAll()
        }
    }
}
