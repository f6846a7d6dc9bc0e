import LayerModels

/// The tokens of the internal API, one per calling service: a service presents its own when it
/// calls another, and each internal route accepts only the tokens of the services that may call
/// it (``InternalCallerMiddleware``). A token that leaks thus opens only the routes its service
/// may call, and a service that holds the tokens of its callers can check them without being
/// able to present any other service's.
public struct InternalTokens: Sendable {
    private let tokens: [String: String]

    /// `tokens` by service name (``InternalAPI/Service``); an empty token counts as none.
    public init(_ tokens: [String: String]) {
        self.tokens = tokens.filter { !$0.value.isEmpty }
    }

    /// A new random token for every service of the suite, as `layer dev` and the tests use them.
    public static func random() -> InternalTokens {
        InternalTokens(Dictionary(uniqueKeysWithValues: InternalAPI.Service.all.map { ($0, Secrets.randomToken()) }))
    }

    /// The token `service` presents when it calls another; empty when this process was not given it.
    public func token(of service: String) -> String { tokens[service] ?? "" }

    /// Every token known, by service.
    public var byService: [String: String] { tokens }

    /// The one of `services` whose token `presented` is (every candidate compared in constant time).
    public func service(presenting presented: String, among services: [String]) -> String? {
        var found: String?
        for service in services {
            if let token = tokens[service], Secrets.constantTimeEquals(presented, token) { found = service }
        }
        return found
    }

    /// The settings that give a process these tokens (for the processes a test or benchmark starts).
    public var environment: [String: String] {
        Dictionary(uniqueKeysWithValues: tokens.map { (Self.setting(of: $0.key), $0.value) })
    }

    /// The setting that holds `service`'s token: `LAYER_INTERNAL_TOKEN_SYNC` for `sync`.
    public static func setting(of service: String) -> String { "LAYER_INTERNAL_TOKEN_\(service.uppercased())" }

    /// Reads the token of every service that is set, and records a problem for each of `required`
    /// that is not. The one token of earlier versions, `LAYER_INTERNAL_TOKEN`, is refused with a
    /// word on what replaced it, so that an upgrade does not run with tokens nobody set.
    static func read(_ reader: inout SettingsReader, required: [String]) -> InternalTokens {
        if reader.optional("LAYER_INTERNAL_TOKEN") != nil {
            reader.problems.append(
                "LAYER_INTERNAL_TOKEN is no longer read: each service has its own token, "
                    + InternalAPI.Service.all.map(setting(of:)).joined(separator: ", "))
        }
        var tokens: [String: String] = [:]
        for service in InternalAPI.Service.all {
            let name = setting(of: service)
            if required.contains(service) {
                tokens[service] = reader.required(name, "the token the \(service) service presents on the internal API")
            } else if let token = reader.optional(name) {
                tokens[service] = token
            }
        }
        return InternalTokens(tokens)
    }
}
