import Yams

extension OpenAPISpec {
    static let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    /// The order of the top-level fields in the OpenAPI specification, kept in a merge whatever
    /// order the files give them in.
    static let fieldOrder = [
        "openapi", "info", "jsonSchemaDialect", "servers", "security", "tags", "paths", "webhooks", "components",
        "externalDocs",
    ]

    /// `documents` as one, in order: their paths and components merged (a path may gather
    /// operations from several documents, but one operation or one component name defined twice
    /// differently is an error), their tags united by name, the first one's `info`, and every
    /// other top-level field the same wherever it is given.
    public static func merging(_ documents: [OpenAPISpec]) throws -> OpenAPISpec {
        guard var merged = documents.first else { throw OpenAPISpecError("no document to merge") }
        for document in documents.dropFirst() {
            try merged.merge(document)
        }
        merged.root = Node.Mapping(merged.root.sorted { order($0.key) < order($1.key) }.map { ($0.key, $0.value) })
        return merged
    }

    private static func order(_ key: Node) -> Int {
        fieldOrder.firstIndex(of: key.string ?? "") ?? fieldOrder.count
    }

    private mutating func merge(_ other: OpenAPISpec) throws {
        let sources = "\(other.source) and \(source)"
        let clash = { (what: String) in OpenAPISpecError("\(sources) both define \(what)") }
        for (key, value) in other.root {
            let field = key.string ?? ""
            guard let existing = root.value(field) else {
                root.set(field, value, key: key)
                continue
            }
            switch field {
            case "info":
                continue
            case "paths":
                root.set(field, .mapping(try Self.mergePaths(existing.mapping, value.mapping, clash)))
            case "components":
                root.set(field, .mapping(try Self.mergeComponents(existing.mapping, value.mapping, clash)))
            case "tags":
                root.set(field, .sequence(try Self.mergeTags(existing.sequence, value.sequence, clash)))
            default:
                guard Self.same(existing, value) else { throw clash("\(field) differently") }
            }
        }
        source += " + " + other.source
    }

    private static func mergePaths(
        _ paths: Node.Mapping?, _ added: Node.Mapping?, _ clash: (String) -> OpenAPISpecError
    ) throws -> Node.Mapping {
        var paths = paths ?? [:]
        for (key, item) in added ?? [:] {
            let path = key.string ?? ""
            guard var existing = paths.value(path)?.mapping else {
                paths.set(path, item, key: key)
                continue
            }
            for (fieldKey, field) in item.mapping ?? [:] {
                let name = fieldKey.string ?? ""
                if let current = existing.value(name) {
                    if methods.contains(name) { throw clash("\(name.uppercased()) \(path)") }
                    guard same(current, field) else { throw clash("\(name) of \(path) differently") }
                } else {
                    existing.set(name, field, key: fieldKey)
                }
            }
            paths.set(path, .mapping(existing))
        }
        return paths
    }

    private static func mergeComponents(
        _ components: Node.Mapping?, _ added: Node.Mapping?, _ clash: (String) -> OpenAPISpecError
    ) throws -> Node.Mapping {
        var components = components ?? [:]
        for (sectionKey, section) in added ?? [:] {
            let kind = sectionKey.string ?? ""
            var merged = components.value(kind)?.mapping ?? [:]
            for (nameKey, component) in section.mapping ?? [:] {
                let name = nameKey.string ?? ""
                if let current = merged.value(name) {
                    guard same(current, component) else { throw clash("components.\(kind).\(name) differently") }
                } else {
                    merged.set(name, component, key: nameKey)
                }
            }
            components.set(kind, .mapping(merged), key: sectionKey)
        }
        return components
    }

    private static func mergeTags(
        _ tags: Node.Sequence?, _ added: Node.Sequence?, _ clash: (String) -> OpenAPISpecError
    ) throws -> Node.Sequence {
        var tags = tags ?? []
        for tag in added ?? [] {
            let name = tag.mapping?.value("name")?.string ?? ""
            if let current = tags.first(where: { $0.mapping?.value("name")?.string == name }) {
                guard same(current, tag) else { throw clash("the tag \(name) differently") }
            } else {
                tags.append(tag)
            }
        }
        return tags
    }

    /// This document without what `common` gave it: the operations, components and tags that are
    /// the same as the shared file's.
    func removing(_ common: OpenAPISpec) -> OpenAPISpec {
        var result = self
        if var paths = root.value("paths")?.mapping {
            for (key, item) in common.root.value("paths")?.mapping ?? [:] {
                guard let path = key.string, var own = paths.value(path)?.mapping else { continue }
                for (fieldKey, field) in item.mapping ?? [:] {
                    guard let name = fieldKey.string, let current = own.value(name), Self.same(current, field) else { continue }
                    own.remove(name)
                }
                if own.isEmpty { paths.remove(path) } else { paths.set(path, .mapping(own)) }
            }
            result.root.set("paths", .mapping(paths))
        }
        if var components = root.value("components")?.mapping {
            for (sectionKey, section) in common.root.value("components")?.mapping ?? [:] {
                guard let kind = sectionKey.string, var own = components.value(kind)?.mapping else { continue }
                for (nameKey, component) in section.mapping ?? [:] {
                    guard let name = nameKey.string, let current = own.value(name), Self.same(current, component) else { continue }
                    own.remove(name)
                }
                if own.isEmpty { components.remove(kind) } else { components.set(kind, .mapping(own)) }
            }
            result.root.set("components", .mapping(components))
        }
        if let tags = root.value("tags")?.sequence {
            let shared = common.root.value("tags")?.sequence ?? []
            let own = tags.filter { tag in !shared.contains { Self.same($0, tag) } }
            result.root.set("tags", .sequence(Node.Sequence(Array(own))))
        }
        return result
    }

    /// Whether two trees say the same: equal scalars (by value and type, however quoted) and
    /// mappings with the same keys in any order.
    static func same(_ a: Node, _ b: Node) -> Bool {
        switch (a, b) {
        case (.scalar(let x), .scalar(let y)):
            return x == y
        case (.sequence(let x), .sequence(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.mapping(let x), .mapping(let y)):
            return x.count == y.count && x.allSatisfy { pair in
                y.value(pair.key.string ?? "").map { same(pair.value, $0) } ?? false
            }
        default:
            return false
        }
    }
}

extension Node.Mapping {
    /// Keys are compared by their text, so that `'200'` and `200` name the same entry.
    func value(_ key: String) -> Node? {
        first { $0.key.string == key }?.value
    }

    /// Replaces the value of `key`, or appends it (under `keyNode`, to keep its quoting).
    mutating func set(_ key: String, _ value: Node, key keyNode: Node? = nil) {
        if let index = firstIndex(where: { $0.key.string == key }) {
            self[index] = (self[index].key, value)
        } else {
            self[keyNode ?? OpenAPISpec.text(key)] = value
        }
    }

    mutating func remove(_ key: String) {
        guard let index = firstIndex(where: { $0.key.string == key }) else { return }
        self[self[index].key] = nil
    }
}
