/// A transport address as STUN carries it in MAPPED-ADDRESS and XOR-MAPPED-ADDRESS: an IPv4 or
/// IPv6 address and a port.
public struct STUNAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Host: Hashable, Sendable {
        /// The 32 bits of the address, most significant first: 127.0.0.1 is `0x7F00_0001`.
        case ipv4(UInt32)
        /// The 128 bits of the address, most significant first.
        case ipv6(UInt128)
    }

    public var host: Host
    public var port: UInt16

    public init(_ host: Host, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// The IPv4 address behind an IPv4-mapped IPv6 one (`::ffff:a.b.c.d`, how a dual-stack socket
    /// sees an IPv4 client), so that the client is told the address it knows; else this one.
    public var unmappingIPv4: STUNAddress {
        guard case .ipv6(let bits) = host, bits >> 32 == 0xFFFF else { return self }
        return STUNAddress(.ipv4(UInt32(truncatingIfNeeded: bits)), port: port)
    }

    /// `192.0.2.1:32853` or `[2001:db8::1]:32853` (RFC 5952's shortest form).
    public var description: String {
        switch host {
        case .ipv4(let bits):
            let octets = [24, 16, 8, 0].map { String(UInt8(truncatingIfNeeded: bits >> $0)) }
            return octets.joined(separator: ".") + ":\(port)"
        case .ipv6(let bits):
            let groups = (0..<8).map { UInt16(truncatingIfNeeded: bits >> (16 * (7 - $0))) }
            return "[" + Self.ipv6Text(groups) + "]:\(port)"
        }
    }

    /// Groups in hexadecimal, the longest run of two or more zero groups (the first, on a tie)
    /// written `::`.
    private static func ipv6Text(_ groups: [UInt16]) -> String {
        var best = (start: 0, count: 0)
        var index = 0
        while index < groups.count {
            var end = index
            while end < groups.count, groups[end] == 0 { end += 1 }
            if end - index > best.count { best = (index, end - index) }
            index = max(end, index + 1)
        }
        let text = groups.map { String($0, radix: 16) }
        guard best.count >= 2 else { return text.joined(separator: ":") }
        let head = text[..<best.start].joined(separator: ":")
        let tail = text[(best.start + best.count)...].joined(separator: ":")
        return head + "::" + tail
    }
}
