import Foundation
import LayerModels
import Yams

/// A service's OpenAPI document, for checking real responses against it: operation lookup by
/// concrete method and path, local `$ref`s, and the JSON-Schema subset the documents use (`type`,
/// including type arrays; `properties`, `required`, `additionalProperties` false or a schema;
/// `items`, `enum`, `pattern`, `minLength`, `maxLength`, `minimum`, `maximum`, `format: date-time`).
public struct OpenAPIDocument: Sendable {
    public let root: JSONValue

    public init(yaml: String) throws {
        root = try Yams.compose(yaml: yaml).map(Self.json) ?? .null
    }

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    /// A YAML tree as the JSON it stands for. Scalars are read by their resolved YAML type; any
    /// other than null, booleans and numbers (a date, say) stays the text it was written as, which
    /// is what a JSON client gets. Keys are compared as text, as in JSON, so `200` and `'200'`
    /// in one mapping are refused.
    static func json(_ node: Node) throws -> JSONValue {
        switch node {
        case .scalar(let scalar):
            return switch node.any {
            case is NSNull: .null
            case let value as Bool: .bool(value)
            case let value as Int: .number(Double(value))
            case let value as Double: .number(value)
            default: .string(scalar.string)
            }
        case .mapping(let mapping):
            var object: [String: JSONValue] = [:]
            for (key, value) in mapping {
                let name = key.string ?? ""
                guard object[name] == nil else {
                    throw ParseError(description: "line \((key.mark?.line).map(String.init) ?? "?"): the key \(name) is repeated")
                }
                object[name] = try json(value)
            }
            return .object(object)
        case .sequence(let sequence):
            return .array(try sequence.map(json))
        case .alias:
            throw ParseError(description: "an alias, which OpenAPI documents do not use")
        }
    }

    /// Every operation: (path template, lower-case method, operation object).
    public var operations: [(path: String, method: String, operation: JSONValue)] {
        guard case .object(let paths)? = root["paths"] else { return [] }
        return paths.sorted { $0.key < $1.key }.flatMap { path, item in
            Self.methods.compactMap { method in item[method].map { (path, method, $0) } }
        }
    }

    static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

    /// Follows `$ref`s (`#/…` JSON pointers into this document) until a value that is not one.
    public func resolve(_ value: JSONValue) -> JSONValue {
        var value = value
        while case .string(let reference)? = value["$ref"], reference.hasPrefix("#/") {
            var target: JSONValue? = root
            for token in reference.dropFirst(2).split(separator: "/") {
                let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
                target = target?[key]
            }
            guard let target else { return .null }
            value = target
        }
        return value
    }

    /// The operation a router would pick for `method path`: the template with the most literal
    /// segments among those that match the path, then the method on it.
    public func operation(_ method: String, _ path: String) -> (template: String, operation: JSONValue)? {
        guard case .object(let paths)? = root["paths"] else { return nil }
        let segments = path.split(separator: "?")[0].split(separator: "/")
        let best = paths.keys.compactMap { template -> (String, Int)? in
            let parts = template.split(separator: "/")
            guard parts.count == segments.count else { return nil }
            var literals = 0
            for (part, segment) in zip(parts, segments) {
                if part.hasPrefix("{") && part.hasSuffix("}") { continue }
                guard part == segment else { return nil }
                literals += 1
            }
            return (template, literals)
        }.max { $0.1 < $1.1 }
        guard let template = best?.0, let operation = paths[template]?[method.lowercased()] else { return nil }
        return (template, operation)
    }

    /// What is wrong with `response` to `method path` according to the document: the operation,
    /// the status, the required headers, the content type and the JSON body against its schema.
    public func problems(_ response: TestResponse, _ method: String, _ path: String) -> [String] {
        guard let (template, operation) = operation(method, path) else {
            return ["\(method) \(path) is not in the document"]
        }
        let responses = operation["responses"]
        guard let documented = (responses?[String(response.status)] ?? responses?["default"]).map(resolve) else {
            return ["\(method) \(template) does not document status \(response.status)"]
        }
        var problems: [String] = []
        if case .object(let headers)? = documented["headers"] {
            for (name, header) in headers.map({ ($0, resolve($1)) }) {
                guard let value = response.headers.first(name: name) else {
                    if header["required"] == true { problems.append("header \(name) is missing") }
                    continue
                }
                let schema = header["schema"] ?? [:]
                let typed: JSONValue =
                    schema["type"] == "integer" ? Double(value).map(JSONValue.number) ?? .string(value) : .string(value)
                problems += validate(typed, schema, at: "header \(name)")
            }
        }
        guard case .object(let content)? = documented["content"], !content.isEmpty else {
            if response.body.readableBytes > 0 { problems.append("an undocumented body: \(response.text)") }
            return problems
        }
        let mediaType =
            response.headers.first(name: "Content-Type")?.split(separator: ";").first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let media = content[mediaType] else {
            return problems + ["Content-Type \(mediaType) is not one of \(content.keys.sorted())"]
        }
        if mediaType.hasSuffix("json") {
            guard let body = response.json else { return problems + ["the body is not JSON: \(response.text)"] }
            problems += validate(body, media["schema"] ?? [:])
        }
        return problems
    }

    /// What is wrong with a request body this test sent, against the operation's request schema.
    public func requestProblems(_ body: JSONValue, contentType: String, _ method: String, _ path: String) -> [String] {
        guard let operation = operation(method, path)?.operation, let requestBody = operation["requestBody"] else {
            return ["\(method) \(path) documents no request body"]
        }
        guard let schema = resolve(requestBody)["content"]?[contentType]?["schema"] else {
            return ["\(method) \(path) documents no \(contentType) request body"]
        }
        return validate(body, schema, at: "request")
    }

    /// Checks `value` against `schema`; each problem names where in the value it is.
    public func validate(_ value: JSONValue, _ schema: JSONValue, at path: String = "$") -> [String] {
        guard case .object(let schema) = resolve(schema) else { return [] }
        if let type = schema["type"] {
            let types: [String] =
                if case .array(let list) = type { list.compactMap(\.stringValue) } else { [type.stringValue ?? ""] }
            guard types.contains(where: { Self.value(value, is: $0) }) else {
                return ["\(path): expected \(types.joined(separator: "|")), got \(value)"]
            }
        }
        var problems: [String] = []
        if case .array(let options)? = schema["enum"], !options.contains(value) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        switch value {
        case .object(let object):
            let properties: [String: JSONValue] = if case .object(let p)? = schema["properties"] { p } else { [:] }
            if case .array(let required)? = schema["required"] {
                for case .string(let key) in required where object[key] == nil {
                    problems.append("\(path): the required property \(key) is missing")
                }
            }
            for (key, item) in object.sorted(by: { $0.key < $1.key }) {
                if let property = properties[key] {
                    problems += validate(item, property, at: "\(path).\(key)")
                } else if schema["additionalProperties"] == false {
                    problems.append("\(path): the property \(key) is not documented")
                } else if let additional = schema["additionalProperties"], additional != true {
                    problems += validate(item, additional, at: "\(path).\(key)")
                }
            }
        case .array(let items):
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() { problems += validate(item, itemSchema, at: "\(path)[\(index)]") }
            }
        case .string(let text):
            if case .number(let min)? = schema["minLength"], Double(text.count) < min {
                problems.append("\(path): shorter than \(min)")
            }
            if case .number(let max)? = schema["maxLength"], Double(text.count) > max {
                problems.append("\(path): longer than \(max)")
            }
            if case .string(let pattern)? = schema["pattern"], text.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(text)' does not match \(pattern)")
            }
            if schema["format"] == "date-time",
                (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) == nil,
                (try? Date.ISO8601FormatStyle().parse(text)) == nil
            {
                problems.append("\(path): '\(text)' is not an RFC 3339 date-time")
            }
        case .number(let number):
            if case .number(let min)? = schema["minimum"], number < min { problems.append("\(path): below \(min)") }
            if case .number(let max)? = schema["maximum"], number > max { problems.append("\(path): above \(max)") }
        default:
            break
        }
        return problems
    }

    static func value(_ value: JSONValue, is type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null),
            ("number", .number):
            true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }
}
