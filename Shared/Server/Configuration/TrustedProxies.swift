import Foundation

/// The proxies whose forwarding headers a service believes (`X-Forwarded-For`,
/// `X-Forwarded-Proto`, `X-Forwarded-Host` and the client-certificate header): exact addresses
/// and CIDR ranges, IPv4 and IPv6, as `LAYER_TRUSTED_PROXIES` lists them. Behind an ingress
/// whose pods change address, the pod network's range is named rather than each pod.
public struct TrustedProxies: Sendable, Equatable, ExpressibleByArrayLiteral {
    /// A network: its address bytes (4 or 16) and how many leading bits must match.
    struct Range: Sendable, Equatable {
        let bytes: [UInt8]
        let prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var bits = prefix
            for (mine, theirs) in zip(bytes, address) where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                if mine & mask != theirs & mask { return false }
                bits -= 8
            }
            return true
        }
    }

    let ranges: [Range]

    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) { self.ranges = ranges }

    /// Parses `entries` (`10.0.0.7`, `10.244.0.0/16`, `fd00::/8`); what is not an address or a
    /// range is returned in `invalid`.
    public init(parsing entries: [String], invalid: inout [String]) {
        var ranges: [Range] = []
        for entry in entries {
            let parts = entry.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count <= 2, let bytes = Self.bytes(of: String(parts[0])) else {
                invalid.append(entry)
                continue
            }
            let prefix = parts.count == 2 ? Int(parts[1]) : bytes.count * 8
            guard let prefix, (0...bytes.count * 8).contains(prefix) else {
                invalid.append(entry)
                continue
            }
            ranges.append(Range(bytes: bytes, prefix: prefix))
        }
        self.ranges = ranges
    }

    /// Exact addresses or ranges; anything unparsable is left out (settings report it instead).
    public init(arrayLiteral entries: String...) {
        var ignored: [String] = []
        self.init(parsing: entries, invalid: &ignored)
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (a peer's IP, IPv4-mapped IPv6 read as IPv4) is one of the proxies.
    public func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.bytes(of: address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The 4 or 16 bytes of an IP address; an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, how a
    /// dual-stack listener sees IPv4 peers) gives the IPv4 bytes.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }
}
