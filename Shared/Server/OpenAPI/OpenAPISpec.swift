import Synchronization
import Yams

/// An OpenAPI document as a YAML tree. Each service keeps its document in its own `openapi.yaml`,
/// and what all of them serve alike (the operational routes, the error shape, the shared headers
/// and responses) is written once in `openapi-common.yaml`; the documents served are merges of
/// those files.
public struct OpenAPISpec {
    /// The files the document came from, to name them when a merge fails.
    public internal(set) var source: String
    var root: Node.Mapping

    public init(yaml: String, source: String) throws {
        let node: Node?
        do {
            node = try Yams.compose(yaml: yaml)
        } catch {
            throw OpenAPISpecError("\(source): \(error)")
        }
        guard case .mapping(let root)? = node else { throw OpenAPISpecError("\(source): not a YAML mapping") }
        self.source = source
        self.root = root
    }

    public init(resource: [UInt8], source: String) throws {
        try self.init(yaml: String(decoding: resource, as: UTF8.self), source: source)
    }

    /// The routes and components every service shares.
    public static func common() throws -> OpenAPISpec {
        try OpenAPISpec(resource: PackageResources.openapi_common_yaml, source: "openapi-common.yaml")
    }

    public func yaml() throws -> String {
        // An unlimited width keeps each description on one line, as in the files.
        try Yams.serialize(node: Self.compact(.mapping(root)), width: -1, allowUnicode: true)
    }

    /// Lists of scalars (tags, enums, required properties, type pairs) written on one line, as the
    /// files write them; Yams does not keep the style of a sequence it read.
    private static func compact(_ node: Node) -> Node {
        switch node {
        case .mapping(var mapping):
            for index in mapping.indices {
                mapping[index] = (mapping[index].key, compact(mapping[index].value))
            }
            return .mapping(mapping)
        case .sequence(var sequence):
            if !sequence.isEmpty, sequence.allSatisfy({ if case .scalar = $0 { true } else { false } }) {
                sequence.style = .flow
            } else {
                sequence = Node.Sequence(sequence.map(compact), sequence.tag, sequence.style)
            }
            return .sequence(sequence)
        case .scalar, .alias:
            return node
        }
    }

    /// A service's document: its own file with the shared one merged in. The files are part of the
    /// build, so one that does not parse or clashes with the shared file is a bug that must stop
    /// the process at once (and the tests, which load every document, before anyone runs it).
    public static func serviceDocument(_ file: [UInt8], service: String) -> String {
        do {
            let own = try OpenAPISpec(resource: file, source: "the \(service) service's openapi.yaml")
            return try merging([own, common()]).yaml()
        } catch {
            preconditionFailure("The OpenAPI document of the \(service) service cannot be built: \(error)")
        }
    }

    /// The document of a process that hosts `services` (name and document of each): for one service
    /// its own document, for several one document of every route the process serves.
    public static func suiteDocument(_ services: [(name: String, document: String)]) throws -> String {
        if services.count == 1 { return services[0].document }
        // The documents are fixed for the life of the process, and merging them is the slowest
        // part of building an app that hosts several services (tests build many), so once will do.
        let key = services.map { "\($0.name)\u{0}\($0.document)" }
        if let merged = suiteDocuments.withLock({ $0[key] }) { return merged }
        let merged = try mergedSuiteDocument(services)
        suiteDocuments.withLock { $0[key] = merged }
        return merged
    }

    private static let suiteDocuments = Mutex<[[String]: String]>([:])

    private static func mergedSuiteDocument(_ services: [(name: String, document: String)]) throws -> String {
        let common = try common()
        guard !services.isEmpty else { return try common.yaml() }
        // Each service's document already holds the shared part; it is taken out of each and
        // merged in once, so that two services still may not define the same operation.
        let own = try services.map {
            try OpenAPISpec(yaml: $0.document, source: "the \($0.name) service's document").removing(common)
        }
        var suite = try merging(own + [common])
        suite.root.set("info", suiteInfo(services.map(\.name), own))
        return try suite.yaml()
    }

    private static func suiteInfo(_ names: [String], _ documents: [OpenAPISpec]) -> Node {
        let infos = documents.compactMap { $0.root.value("info")?.mapping }
        let parts = infos.compactMap { info -> String? in
            guard let title = info.value("title")?.string, let description = info.value("description")?.string else { return nil }
            return "\(title): \(description)"
        }
        var info = Node.Mapping([])
        info.set("title", text("Layerline suite (\(names.joined(separator: " + ")))"))
        info.set("version", infos.first?.value("version") ?? text("3.0"))
        info.set("summary", text("The \(names.joined(separator: " and ")) services in one process, on one listener."))
        info.set("description", .scalar(.init(parts.joined(separator: "\n\n"), Tag(.str), .literal)))
        return .mapping(info)
    }

    /// A string scalar, quoted when it would otherwise read as a number, a boolean or null.
    static func text(_ string: String) -> Node {
        .scalar(string.represented())
    }
}

/// A document that does not parse, or documents that cannot be merged.
public struct OpenAPISpecError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
