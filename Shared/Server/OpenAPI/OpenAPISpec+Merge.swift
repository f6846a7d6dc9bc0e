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
            case "paths", "components":
                root.set(field, .mapping(try Self.mergeEntries(existing.mapping, value.mapping, of: field, clash)))
            case "tags":
                root.set(field, .sequence(try Self.mergeTags(existing.sequence, value.sequence, clash)))
            default:
                guard Self.same(existing, value) else { throw clash("\(field) differently") }
            }
        }
        source += " + " + other.source
    }

    /// `added` merged into `base` two levels down: path and operation (or other field of the path
    /// item), or section and component name. An entry both give must be the same, and an
    /// operation must be one document's alone.
    private static func mergeEntries(
        _ base: Node.Mapping?, _ added: Node.Mapping?, of field: String, _ clash: (String) -> OpenAPISpecError
    ) throws -> Node.Mapping {
        var merged = base ?? [:]
        for (groupKey, group) in added ?? [:] {
            let name = groupKey.string ?? ""
            var entries = merged.value(name)?.mapping ?? [:]
            for (entryKey, entry) in group.mapping ?? [:] {
                let entryName = entryKey.string ?? ""
                guard let current = entries.value(entryName) else {
                    entries.set(entryName, entry, key: entryKey)
                    continue
                }
                if field == "paths", methods.contains(entryName) { throw clash("\(entryName.uppercased()) \(name)") }
                guard same(current, entry) else { throw clash("\(field).\(name).\(entryName) differently") }
            }
            merged.set(name, .mapping(entries), key: groupKey)
        }
        return merged
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
        for field in ["paths", "components"] {
            guard let own = root.value(field)?.mapping else { continue }
            result.root.set(field, .mapping(Self.subtract(common.root.value(field)?.mapping, from: own)))
        }
        if let tags = root.value("tags")?.sequence {
            let shared = common.root.value("tags")?.sequence ?? []
            let own = tags.filter { tag in !shared.contains { Self.same($0, tag) } }
            result.root.set("tags", .sequence(Node.Sequence(Array(own))))
        }
        return result
    }

    /// `own` without the entries of `shared` that it has alike, two levels down (path and method,
    /// or section and component name); a group left empty goes too.
    private static func subtract(_ shared: Node.Mapping?, from own: Node.Mapping) -> Node.Mapping {
        var own = own
        for (groupKey, group) in shared ?? [:] {
            guard let name = groupKey.string, var entries = own.value(name)?.mapping else { continue }
            for (entryKey, entry) in group.mapping ?? [:] {
                guard let entryName = entryKey.string, let current = entries.value(entryName), same(current, entry) else {
                    continue
                }
                entries.remove(entryName)
            }
            if entries.isEmpty { own.remove(name) } else { own.set(name, .mapping(entries)) }
        }
        return own
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
            return x.count == y.count
                && x.allSatisfy { pair in
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
