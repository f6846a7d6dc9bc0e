import ArgumentParser
import Foundation
import LayerServer
import LayerSuite

/// `layer openapi`: the OpenAPI documents without a database or a server, for validators, client
/// generators and readers. The suite's document is the one `layer dev` serves; a service's is the
/// one its own executable serves.
struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Print the OpenAPI document of the whole suite or of one service.",
        discussion: """
            With --out, writes <service>.yaml for each service and suite.yaml into that directory \
            (only <service>.yaml with --service).
            """)

    @Option(help: "Only this service's document (\(Suite.openAPIDocuments.map(\.name).joined(separator: ", "))).")
    var service: String?
    @Option(help: "A directory to write the documents into, instead of printing one.")
    var out: String?

    func validate() throws {
        let names = Suite.openAPIDocuments.map(\.name)
        if let service, !names.contains(service) {
            throw ValidationError("No service \(service); the services are \(names.joined(separator: ", ")).")
        }
    }

    func run() throws {
        let services = Suite.openAPIDocuments
        var documents = services.filter { service == nil || $0.name == service }
        if service == nil {
            documents.append(("suite", try OpenAPISpec.suiteDocument(services)))
        }
        guard let out else {
            print(documents.last?.document ?? "", terminator: "")
            return
        }
        let directory = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, document) in documents {
            let file = directory.appendingPathComponent("\(name).yaml")
            try document.write(to: file, atomically: true, encoding: .utf8)
            print(file.path)
        }
    }
}
