import NIOCore
import STUNCodec

extension STUNAddress {
    /// The address of a datagram's sender; nil for a Unix socket, which has none.
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let address):
            let raw = address.address
            self.init(.ipv4(UInt32(bigEndian: raw.sin_addr.s_addr)), port: UInt16(bigEndian: raw.sin_port))
        case .v6(let address):
            let raw = address.address
            let bits = withUnsafeBytes(of: raw.sin6_addr) { $0.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
            self = STUNAddress(.ipv6(bits), port: UInt16(bigEndian: raw.sin6_port)).unmappingIPv4
        case .unixDomainSocket:
            return nil
        }
    }
}
