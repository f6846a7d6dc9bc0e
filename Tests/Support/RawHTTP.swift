import Foundation
import LayerServer
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A request written byte for byte, for what HTTP clients will not send as given (a WebSocket
/// upgrade's `Connection: Upgrade`, which they manage themselves).
public enum RawHTTP {
    /// Sends `request` to the loopback `port` (over TLS with `tls`) and returns the response: its
    /// head and as much body as `Content-Length` says, or all until the server closed.
    public static func exchange(
        port: Int, _ request: String, tls: TLSConfiguration? = nil, timeout: Duration = .seconds(15)
    ) async throws -> String {
        String(decoding: try await exchange(port: port, request, tls: tls, timeout: timeout, until: isComplete), as: UTF8.self)
    }

    /// Sends a WebSocket upgrade and answers the status of the response, and the code of the
    /// close frame the server sent within `window` after a 101 (nil if none came).
    public static func webSocket(
        port: Int, _ request: String, tls: TLSConfiguration? = nil, window: Duration = .seconds(2)
    ) async throws -> (status: Int, closeCode: Int?) {
        let bytes = try await exchange(port: port, request, tls: tls, timeout: .seconds(15), quiet: window) { bytes in
            closeCode(after: bytes) != nil || (isComplete(bytes) && !bytes.starts(with: Array("HTTP/1.1 101".utf8)))
        }
        let status = Int(String(decoding: bytes.dropFirst(9).prefix(3), as: UTF8.self)) ?? 0
        return (status, closeCode(after: bytes))
    }

    /// The code of a close frame right after a 101's head.
    static func closeCode(after bytes: [UInt8]) -> Int? {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return nil }
        var frames = bytes[end...]
        // Frames before the close (a server's other packets) are skipped.
        while frames.count >= 2 {
            let start = frames.startIndex
            let length = Int(frames[start + 1] & 0x7F)
            guard length < 126, frames.count >= 2 + length else { return nil }
            if frames[start] & 0x0F == 0x8, length >= 2 {
                return Int(frames[start + 2]) << 8 | Int(frames[start + 3])
            }
            frames = frames.dropFirst(2 + length)
        }
        return nil
    }

    /// What the server sent until `done` says it is all, or the server closed, or nothing came
    /// for `quiet` once something had.
    static func exchange(
        port: Int, _ request: String, tls: TLSConfiguration?, timeout: Duration, quiet: Duration? = nil,
        until done: @escaping @Sendable ([UInt8]) -> Bool
    ) async throws -> [UInt8] {
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await withDeadline(timeout) {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                let received = Received()
                // Once nothing more comes for `quiet`, the connection is closed, which ends the reading.
                let watch = quiet.map { quiet in
                    Task {
                        var seen = -1
                        while !Task.isCancelled {
                            try await Task.sleep(for: quiet)
                            let count = received.count
                            if count > 0, count == seen {
                                try await channel.channel.close()
                                return
                            }
                            seen = count
                        }
                    }
                }
                defer { watch?.cancel() }
                do {
                    for try await chunk in inbound where received.append(chunk, done: done) { break }
                } catch let error as NIOSSLError where error == .uncleanShutdown {
                    // A server that closes without TLS's close_notify has said all it had to say.
                } catch let error as ChannelError where error == .ioOnClosedChannel || error == .alreadyClosed {
                    // Closed here once the server fell quiet.
                }
                return received.bytes
            }
        }
    }

    /// Whether `text` holds a whole response: its head, and as much body as `Content-Length`
    /// says (a proxy may keep the connection open after it).
    @Sendable static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return false }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return head.hasPrefix("http/1.1 101") }
        return bytes.count - end.upperBound >= length
    }

    /// A WebSocket upgrade of `path` from a page on `origin`, as a browser sends it.
    public static func webSocketUpgrade(_ path: String, origin: String, host: String = "127.0.0.1") -> String {
        [
            "GET \(path) HTTP/1.1", "Host: \(host)", "Connection: Upgrade", "Upgrade: websocket",
            "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Protocol: layer-3.0", "Origin: \(origin)", "", "",
        ].joined(separator: "\r\n")
    }
}

/// The bytes received so far, shared with the watch that ends a quiet exchange.
private final class Received: Sendable {
    private let state = Mutex<[UInt8]>([])

    var count: Int { state.withLock { $0.count } }
    var bytes: [UInt8] { state.withLock { $0 } }

    /// Adds `chunk`; whether `done` says the bytes are complete now.
    func append(_ chunk: ByteBuffer, done: ([UInt8]) -> Bool) -> Bool {
        state.withLock { bytes in
            bytes += chunk.readableBytesView
            return done(bytes)
        }
    }
}
