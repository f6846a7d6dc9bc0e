import Foundation

/// The STUN bench's client socket: UDP on loopback, connected to one server port, with plain
/// blocking system calls (a receive gives up after 200 ms), so that the client costs little and
/// the same for every server.
final class BenchUDPSocket {
    private let descriptor: Int32
    let remotePort: Int

    init(port: Int) throws {
        remotePort = port
        descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket: \(errno)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Room for bursts of answers.
        var size: Int32 = 4 << 20
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw BenchError("connect: \(errno)") }
    }

    deinit {
        close(descriptor)
    }

    /// A loopback UDP port nobody was using a moment ago.
    static func freePort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(probe) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw BenchError("bind: \(errno)") }
        return port(of: probe)
    }

    var localPort: Int { Self.port(of: descriptor) }

    func send(_ bytes: [UInt8]) throws {
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }
        guard sent == bytes.count else { throw BenchError("send: \(errno)") }
    }

    /// The next datagram, written into `buffer`: its size, or nil after the timeout.
    func receive(into buffer: inout [UInt8]) -> Int? {
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? count : nil
    }

    func receive() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        return receive(into: &buffer).map { Array(buffer.prefix($0)) }
    }

    /// CPU seconds the calling thread has used.
    static func threadCPU() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private static func port(of descriptor: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
