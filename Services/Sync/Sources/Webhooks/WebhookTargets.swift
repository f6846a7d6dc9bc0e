import Foundation
import LayerServer

#if canImport(Glibc)
    import Glibc
#endif

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

    /// Why the suite will not call `target` now, or nil: without `privateTargets` (the webhook's,
    /// as the replica that registered it allowed), a host name that
    /// resolves to a loopback or private address is refused when it is called, not only when it
    /// is registered (a name can be pointed anywhere later).
    static func refusal(calling target: String, privateTargets: Bool) async -> String? {
        guard !privateTargets, let host = URLComponents(string: target)?.host, !host.isEmpty else { return nil }
        let addresses = await Self.resolve(host)
        guard let address = addresses.first(where: { Self.isPrivate(host: $0) }) else { return nil }
        return "The target's host \(host) resolves to \(address), a loopback or private address this server does not call."
    }

    /// The numeric addresses `host` resolves to (none when it does not), looked up off the
    /// cooperative threads, as the lookup blocks.
    static func resolve(_ host: String) async -> [String] {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, nil, &hints, &list) == 0 else {
                    continuation.resume(returning: [])
                    return
                }
                defer { freeaddrinfo(list) }
                var addresses: [String] = []
                var entry = list
                while let current = entry {
                    var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                    if getnameinfo(
                        current.pointee.ai_addr, current.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0,
                        NI_NUMERICHOST) == 0
                    {
                        addresses.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
                    }
                    entry = current.pointee.ai_next
                }
                continuation.resume(returning: addresses)
            }
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
