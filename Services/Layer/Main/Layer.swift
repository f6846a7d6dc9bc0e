import ArgumentParser

/// `layer`: the operator's command. `layer dev` runs the whole suite on a private PostgreSQL.
@main
struct Layer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run and operate the Layerline suite.",
        subcommands: [DevCommand.self, MigrateCommand.self, AdminCommand.self, TokenCommand.self, OpenAPICommand.self])
}
