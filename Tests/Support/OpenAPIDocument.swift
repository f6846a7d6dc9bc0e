import Foundation
import LayerModels

/// A service's OpenAPI document, for checking real responses against it: operation lookup by
/// concrete method and path, local `$ref`s, and the JSON-Schema subset the documents use (`type`,
/// including type arrays; `properties`, `required`, `additionalProperties` false or a schema;
/// `items`, `enum`, `pattern`, `minLength`, `maxLength`, `minimum`, `maximum`, `format: date-time`).
public struct OpenAPIDocument: Sendable {
    public let root: JSONValue

    public init(yaml: String) throws {
        root = try YAMLSubset.parse(yaml)
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
                let typed: JSONValue = schema["type"] == "integer" ? Double(value).map(JSONValue.number) ?? .string(value) : .string(value)
                problems += validate(typed, schema, at: "header \(name)")
            }
        }
        guard case .object(let content)? = documented["content"], !content.isEmpty else {
            if response.body.readableBytes > 0 { problems.append("an undocumented body: \(response.text)") }
            return problems
        }
        let mediaType = response.headers.first(name: "Content-Type")?.split(separator: ";").first
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
            let types: [String] = if case .array(let list) = type { list.compactMap(\.stringValue) } else { [type.stringValue ?? ""] }
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
            if case .number(let min)? = schema["minLength"], Double(text.count) < min { problems.append("\(path): shorter than \(min)") }
            if case .number(let max)? = schema["maxLength"], Double(text.count) > max { problems.append("\(path): longer than \(max)") }
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

/// The YAML subset the OpenAPI documents are written in: block mappings and `- ` sequences
/// indented with spaces (a nested block indented deeper than its key), one-line plain or quoted
/// scalars, flow collections (`[a, 'b']`, `{k: v}`, `{}`), full-line comments. Not supported:
/// tabs, anchors and aliases, tags, block scalars, trailing comments, multi-line flow collections.
public enum YAMLSubset {
    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ text: String) throws -> JSONValue {
        var lines: [Line] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = raw.drop { $0 == " " }
            if content.isEmpty || content.hasPrefix("#") { continue }
            if raw.contains("\t") { throw ParseError(description: "line \(number + 1): a tab") }
            lines.append(Line(number: number + 1, indent: raw.count - content.count, text: String(content)))
        }
        var parser = BlockParser(lines: lines)
        guard let first = lines.first else { return .null }
        let value = try parser.node(indent: first.indent)
        if parser.index < lines.count {
            throw ParseError(description: "line \(lines[parser.index].number): unexpected indentation")
        }
        return value
    }

    struct Line {
        var number: Int
        var indent: Int
        var text: String
    }

    struct BlockParser {
        var lines: [Line]
        var index = 0

        mutating func node(indent: Int) throws -> JSONValue {
            let text = lines[index].text
            return text == "-" || text.hasPrefix("- ") ? try sequence(indent) : try mapping(indent)
        }

        mutating func sequence(_ indent: Int) throws -> JSONValue {
            var items: [JSONValue] = []
            while index < lines.count, lines[index].indent == indent, lines[index].text == "-" || lines[index].text.hasPrefix("- ") {
                let line = lines[index]
                let rest = line.text.dropFirst().drop { $0 == " " }
                if rest.isEmpty {
                    index += 1
                    items.append(try child(of: indent))
                } else if try rest == "-" || rest.hasPrefix("- ") || YAMLSubset.splitKey(rest, line: line.number) != nil {
                    // `- key: value` (or `- - item`) starts a block at the column after the dash.
                    let column = indent + line.text.count - rest.count
                    lines[index] = Line(number: line.number, indent: column, text: String(rest))
                    items.append(try node(indent: column))
                } else {
                    items.append(try YAMLSubset.inlineValue(rest, line: line.number))
                    index += 1
                }
            }
            return .array(items)
        }

        mutating func mapping(_ indent: Int) throws -> JSONValue {
            var object: [String: JSONValue] = [:]
            while index < lines.count, lines[index].indent == indent {
                let line = lines[index]
                guard let (key, rest) = try YAMLSubset.splitKey(Substring(line.text), line: line.number) else {
                    throw ParseError(description: "line \(line.number): expected 'key: value', got '\(line.text)'")
                }
                guard object[key] == nil else { throw ParseError(description: "line \(line.number): duplicate key \(key)") }
                index += 1
                object[key] = rest.isEmpty ? try child(of: indent) : try YAMLSubset.inlineValue(rest, line: line.number)
            }
            return .object(object)
        }

        /// The block under a `key:` or `-` that had nothing after it (null when there is none).
        mutating func child(of indent: Int) throws -> JSONValue {
            guard index < lines.count, lines[index].indent > indent else { return .null }
            return try node(indent: lines[index].indent)
        }
    }

    /// Splits `key: value` (or `key:`) into the key and the rest; nil when the text is not a pair.
    static func splitKey(_ text: Substring, line: Int) throws -> (String, Substring)? {
        var scanner = FlowScanner(text: text, line: line)
        let key: String
        if text.first == "'" || text.first == "\"" {
            key = try scanner.quoted()
        } else if text.first == "[" || text.first == "{" {
            return nil
        } else {
            guard let colon = text.firstRange(of: ": ")?.lowerBound ?? (text.hasSuffix(":") ? text.index(before: text.endIndex) : nil)
            else { return nil }
            return (text[..<colon].trimmingCharacters(in: .whitespaces), text[text.index(after: colon)...].drop { $0 == " " })
        }
        let rest = text[scanner.position...]
        guard rest == ":" || rest.hasPrefix(": ") else { return nil }
        return (key, rest.dropFirst().drop { $0 == " " })
    }

    /// A value on the same line as its key or dash: a flow collection or a scalar.
    static func inlineValue(_ text: Substring, line: Int) throws -> JSONValue {
        var scanner = FlowScanner(text: text, line: line)
        let value = try scanner.value(inFlow: false)
        scanner.skipSpaces()
        guard scanner.position == text.endIndex else {
            throw ParseError(description: "line \(line): unexpected '\(text[scanner.position...])'")
        }
        return value
    }

    /// A plain scalar's value: booleans, null, decimal numbers, otherwise the string.
    static func plain(_ text: String) -> JSONValue {
        switch text {
        case "true": return true
        case "false": return false
        case "null", "~", "": return nil
        default:
            let numeric = text.first.map { $0.isNumber || $0 == "-" } == true
                && text.dropFirst().allSatisfy { $0.isNumber || $0 == "." } && text.filter { $0 == "." }.count <= 1
            if numeric, let number = Double(text) { return .number(number) }
            return .string(text)
        }
    }

    /// Reads flow collections and scalars from one line.
    struct FlowScanner {
        let text: Substring
        let line: Int
        var position: Substring.Index

        init(text: Substring, line: Int) {
            self.text = text
            self.line = line
            position = text.startIndex
        }

        var current: Character? { position < text.endIndex ? text[position] : nil }

        mutating func advance() { position = text.index(after: position) }

        mutating func skipSpaces() { while current == " " { advance() } }

        func error(_ message: String) -> ParseError { ParseError(description: "line \(line): \(message) in '\(text)'") }

        mutating func value(inFlow: Bool) throws -> JSONValue {
            skipSpaces()
            switch current {
            case "[":
                advance()
                var items: [JSONValue] = []
                try list(closing: "]") { items.append(try $0.value(inFlow: true)) }
                return .array(items)
            case "{":
                advance()
                var object: [String: JSONValue] = [:]
                try list(closing: "}") { scanner in
                    let key = scanner.current == "'" || scanner.current == "\"" ? try scanner.quoted() : scanner.plainText(stops: ":")
                    scanner.skipSpaces()
                    guard scanner.current == ":" else { throw scanner.error("expected ':'") }
                    scanner.advance()
                    object[key] = try scanner.value(inFlow: true)
                }
                return .object(object)
            case "'", "\"":
                return .string(try quoted())
            default:
                return YAMLSubset.plain(plainText(stops: inFlow ? ",]}" : ""))
            }
        }

        /// Comma-separated items up to `closing`, the opening bracket already read.
        mutating func list(closing: Character, item: (inout FlowScanner) throws -> Void) throws {
            skipSpaces()
            if current == closing { return advance() }
            while true {
                try item(&self)
                skipSpaces()
                switch current {
                case ",": advance()
                case closing: return advance()
                default: throw error("expected ',' or '\(closing)'")
                }
            }
        }

        mutating func plainText(stops: String) -> String {
            let start = position
            while let character = current, !stops.contains(character) { advance() }
            return text[start..<position].trimmingCharacters(in: .whitespaces)
        }

        /// A single-quoted (`''` escapes a quote) or double-quoted (backslash escapes) string.
        mutating func quoted() throws -> String {
            guard let quote = current else { throw error("expected a quote") }
            advance()
            var result = ""
            while let character = current {
                advance()
                if character == quote {
                    guard quote == "'", current == "'" else { return result }
                    advance()
                    result.append("'")
                } else if quote == "\"", character == "\\", let escaped = current {
                    advance()
                    result.append(escaped == "n" ? "\n" : escaped == "t" ? "\t" : escaped)
                } else {
                    result.append(character)
                }
            }
            throw error("unterminated string")
        }
    }
}
