import Foundation

/// A web origin as browsers write it in `Origin`: a scheme, a host and a port (the default port
/// of http and https stands for itself), lower-cased.
public struct WebOrigin: Sendable, Hashable {
    public var scheme: String
    public var host: String
    /// The port; that of the scheme when the origin leaves it out (0 for schemes without one).
    public var port: Int

    /// Parses `scheme://host[:port]`; nil for anything else (`null`, a path, a malformed host).
    public init?(_ text: String) {
        guard let parsed = OriginRule.parseOrigin(text, allowingWildcards: false), case .exact(let host) = parsed.host,
            case .number(let port) = parsed.port
        else { return nil }
        (scheme, self.host, self.port) = (parsed.scheme, host, port)
    }

    /// Whether a web page could have sent it: the origins of pages are http and https; other
    /// schemes are an app's web view (`capacitor://localhost`) or a client that is no browser
    /// (`ws://…`).
    public var isWebPage: Bool { scheme == "http" || scheme == "https" }

    /// `host[:port]` as a `Host` header writes it for this origin.
    public func isServed(byAuthority authority: String) -> Bool {
        let authority = authority.lowercased()
        return authority == "\(host):\(port)" || (authority == host && port == OriginRule.defaultPort(of: scheme))
    }
}

/// One entry of an allowed-origins list: a web origin a browser may call the suite from.
///
/// - `https://app.example.com` (an exact origin; a default port may be written or left out)
/// - `http://localhost:*` (any port of that scheme and host)
/// - `https://*.example.com` (any subdomain, not the domain itself; with `:*`, any port too)
/// - `capacitor://localhost` (an app's web view; any scheme is taken)
/// - `null` (the opaque origin of pages loaded from files, as hybrid apps are)
/// - `*` (any origin but `null`)
public struct OriginRule: Sendable, Hashable, CustomStringConvertible {
    enum Host: Hashable {
        case exact(String)
        /// A subdomain of the suffix (`.example.com`).
        case subdomains(String)
    }

    enum Port: Hashable {
        case number(Int)
        case any
    }

    enum Pattern: Hashable {
        case any
        case opaque
        case origin(scheme: String, host: Host, port: Port)
    }

    let pattern: Pattern
    /// The rule as it was written, for answers and logs.
    public let description: String

    /// The longest rule taken; an origin is a scheme, a host and a port.
    public static let maxLength = 255

    /// Parses a rule; nil when it is not one (a path, a query, a malformed host).
    public init?(_ text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, text.count <= Self.maxLength else { return nil }
        description = text
        switch text.lowercased() {
        case "*":
            pattern = .any
        case "null":
            pattern = .opaque
        default:
            guard let parsed = Self.parseOrigin(text, allowingWildcards: true) else { return nil }
            pattern = .origin(scheme: parsed.scheme, host: parsed.host, port: parsed.port)
        }
    }

    /// Whether a browser's `Origin` header value is allowed by this rule.
    public func matches(_ origin: String) -> Bool {
        switch pattern {
        case .any:
            return WebOrigin(origin) != nil
        case .opaque:
            return origin.lowercased() == "null"
        case .origin(let scheme, let host, let port):
            guard let given = WebOrigin(origin), given.scheme == scheme else { return false }
            if case .number(let number) = port, given.port != number { return false }
            switch host {
            case .exact(let expected): return given.host == expected
            case .subdomains(let suffix): return given.host.hasSuffix(suffix) && given.host.count > suffix.count
            }
        }
    }

    /// Whether the rule names one origin, without wildcards.
    public var isOneOrigin: Bool {
        guard case .origin(_, .exact, .number) = pattern else { return false }
        return true
    }

    static func defaultPort(of scheme: String) -> Int {
        switch scheme {
        case "https": 443
        case "http": 80
        default: 0
        }
    }

    /// `scheme://host[:port]` with the scheme and host lower-cased and a left-out port read as
    /// the scheme's default; with `allowingWildcards`, `*.` before the host and `:*` as the port.
    static func parseOrigin(_ text: String, allowingWildcards: Bool) -> (scheme: String, host: Host, port: Port)? {
        let lowered = text.lowercased()
        guard let separator = lowered.range(of: "://") else { return nil }
        let scheme = String(lowered[..<separator.lowerBound])
        guard let first = scheme.first, first.isLetter, first.isASCII,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) })
        else { return nil }
        let authority = lowered[separator.upperBound...]
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \\".contains($0) }) else { return nil }
        var hostText = Substring(authority)
        var port = Port.number(defaultPort(of: scheme))
        // The port is after the last colon outside an IPv6 literal's brackets.
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            hostText = authority[..<colon]
            let portText = authority[authority.index(after: colon)...]
            if portText == "*" {
                guard allowingWildcards else { return nil }
                port = .any
            } else {
                guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII),
                    let number = Int(portText), (1...65535).contains(number)
                else { return nil }
                port = .number(number)
            }
        }
        if isHost(hostText) { return (scheme, .exact(String(hostText)), port) }
        guard allowingWildcards, hostText.hasPrefix("*."), isHost(hostText.dropFirst(2)) else { return nil }
        return (scheme, .subdomains(String(hostText.dropFirst(1))), port)
    }

    /// A DNS name, an IPv4 address or a bracketed IPv6 literal.
    private static func isHost(_ host: Substring) -> Bool {
        guard !host.isEmpty, host.count <= 253 else { return false }
        if host.hasPrefix("[") {
            let literal = host.dropFirst().dropLast()
            return host.hasSuffix("]") && !literal.isEmpty && literal.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        return host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.count) && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                && label.first != "-" && label.last != "-"
        }
    }
}

extension Array where Element == OriginRule {
    /// Parses a list of rules, naming each entry that is not one.
    public static func parsing(_ texts: [String]) -> (rules: [OriginRule], invalid: [(index: Int, text: String)]) {
        var rules: [OriginRule] = []
        var invalid: [(Int, String)] = []
        for (index, text) in texts.enumerated() {
            if let rule = OriginRule(text) { rules.append(rule) } else { invalid.append((index, text)) }
        }
        return (rules, invalid)
    }

    public func allows(_ origin: String) -> Bool { contains { $0.matches(origin) } }
}

extension OriginRule {
    /// The most origins one app lists.
    public static let maxPerApp = 100

    /// An app's `allowed_origins` as given to the API: each a rule (422 naming
    /// `<property>.<index>` otherwise), at most ``maxPerApp``, duplicates dropped.
    public static func validatedList(_ texts: [String], property: String) throws -> [String] {
        guard texts.count <= maxPerApp else {
            throw APIError.invalid(property, "An app lists at most \(maxPerApp) origins.")
        }
        var seen = Set<String>()
        return try texts.enumerated().compactMap { index, text in
            guard let rule = OriginRule(text) else {
                throw APIError.invalid(
                    "\(property).\(index)",
                    "'\(text.prefix(80))' is not a web origin: write https://app.example.com, http://localhost:*, https://*.example.com, null or *."
                )
            }
            return seen.insert(rule.description).inserted ? rule.description : nil
        }
    }
}
