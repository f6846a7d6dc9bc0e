import Foundation
import LayerServer

/// Where webhooks may point. A target is an `https` URL of a host on the internet; with
/// `privateTargets` (for development, and the default of `layer dev`), also a loopback or private
/// address, over plain `http` too. Without it, a target naming such an address is refused, so that
/// an app cannot make the suite call into the network it runs in.
struct WebhookTargets: Sendable {
    let privateTargets: Bool

    /// `text` as a target, or 422 `invalid_property` naming `target_url` and why.
    func check(_ text: String) throws -> String {
        let property = "target_url"
        guard text.utf8.count <= 2048, let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else {
            throw APIError.invalid(property, "target_url is an absolute https URL of at most 2048 bytes.")
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw APIError.invalid(property, "target_url has no user, password or fragment.")
        }
        let isPrivate = Self.isPrivate(host: host)
        if isPrivate && !privateTargets {
            throw APIError.invalid(
                property, "target_url names a loopback or private address, which this server does not call.")
        }
        switch scheme {
        case "https": return text
        case "http" where isPrivate: return text
        default: throw APIError.invalid(property, "target_url must be an https URL.")
        }
    }

    /// Whether `host` names this machine or a private network: `localhost` (and names under it)
    /// or an IP address in a loopback, private, link-local or unique-local range.
    static func isPrivate(host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        if parts.count == 4, parts.allSatisfy({ $0.map { (0...255).contains($0) } ?? false }) {
            let (a, b) = (parts[0]!, parts[1]!)
            return a == 10 || a == 127 || a == 0 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168)
                || (a == 169 && b == 254) || (a == 100 && (64...127).contains(b))
        }
        if name.contains(":") {
            return name == "::1" || name == "::" || name.hasPrefix("fe80:") || name.hasPrefix("fc") || name.hasPrefix("fd")
                || name.hasPrefix("::ffff:")
        }
        return false
    }
}
