import Foundation

/// A UDP socket of the test's own on a loopback address, to talk to a STUN server as a device
/// does: plain system calls, so that nothing of the server's stack is on the client's side.
final class UDPClient {
    private let descriptor: Int32
    private let ipv6: Bool

    /// A socket on the loopback address of its family; for IPv4, `address` may name another
    /// address of 127.0.0.0/8, which stands for another client. `port` 0 takes any free one.
    init(ipv6: Bool = false, address: UInt32 = 0x7F00_0001, port: Int = 0) throws {
        self.ipv6 = ipv6
        descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw UDPError("socket: \(errno)") }
        let bound = Self.withLoopback(ipv6: ipv6, address: address, port: port) { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            let error = errno
            close(descriptor)
            throw UDPError("bind: \(error)")
        }
    }

    deinit {
        close(descriptor)
    }

    /// The port the system gave the socket.
    var port: Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        // sin_port and sin6_port both follow the 2-byte family.
        return Int(UInt16(bigEndian: withUnsafeBytes(of: storage) { $0.load(fromByteOffset: 2, as: UInt16.self) }))
    }

    /// Sends `bytes` to the loopback address of the socket's family at `port`.
    func send(_ bytes: [UInt8], toPort port: Int) throws {
        let sent = Self.withLoopback(ipv6: ipv6, port: port) { address, length in
            bytes.withUnsafeBytes { sendto(descriptor, $0.baseAddress, $0.count, 0, address, length) }
        }
        guard sent == bytes.count else { throw UDPError("sendto: \(errno)") }
    }

    /// The next datagram that arrives within `timeout`; nil if none does.
    func receive(within timeout: Duration = .seconds(2)) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&poller, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }

    private static func withLoopback<T>(
        ipv6: Bool, address ipv4: UInt32 = 0x7F00_0001, port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T
    ) -> T {
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = in6addr_loopback
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = ipv4.bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

struct UDPError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
