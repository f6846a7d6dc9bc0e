import Hummingbird
import NIOCore
import Synchronization

extension Response {
    /// The whole body of a response, for giving a route's answer over another transport.
    public func collectBody() async throws -> ByteBuffer {
        let collected = Collected()
        try await body.write(Collector(collected: collected))
        return collected.buffer.withLock { $0 }
    }
}

private final class Collected: Sendable {
    let buffer = Mutex(ByteBuffer())
}

private struct Collector: ResponseBodyWriter {
    let collected: Collected

    mutating func write(_ buffer: ByteBuffer) async throws {
        collected.buffer.withLock { stored in
            var buffer = buffer
            stored.writeBuffer(&buffer)
        }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
