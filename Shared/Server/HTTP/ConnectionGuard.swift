import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Sets up each connection with a ``FirstRequestDeadline`` in front of `Base`'s handlers, and,
/// given `allowsUpgradeFrom`, an ``UpgradeOriginGate`` right behind its HTTP decoder.
///
/// Hummingbird's own idle timer and graceful-shutdown handling are installed only once the
/// first request head has arrived, so a connection that sends nothing (or trickles its first
/// head a byte at a time) would otherwise stay open forever, and would keep a graceful shutdown
/// waiting on it too.
public struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    public typealias Value = Base.Value
    let base: Base
    let headTimeout: Duration
    let allowsUpgradeFrom: (@Sendable (String, String?) async -> Bool)?

    public init(
        _ base: Base, headTimeout: Duration, allowsUpgradeFrom: (@Sendable (String, String?) async -> Bool)? = nil
    ) {
        self.base = base
        self.headTimeout = headTimeout
        self.allowsUpgradeFrom = allowsUpgradeFrom
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(FirstRequestDeadline(timeout: headTimeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            if let allowsUpgradeFrom {
                let pipeline = channel.pipeline.syncOperations
                let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                try pipeline.addHandler(UpgradeOriginGate(allows: allowsUpgradeFrom), position: .after(decoder))
            }
            return value
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a connection whose first request head has not fully arrived within `timeout`, or
/// that has sent no complete head when the server starts shutting down. Once the head (bytes
/// up to the first empty line) has passed, it leaves the pipeline.
final class FirstRequestDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// The last bytes seen, to find `\r\n\r\n` across reads.
    private var tail: [UInt8] = []
    private var headArrived = false

    init(timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        self.timeout = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            loopBound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headArrived {
            let buffer = unwrapInboundIn(data)
            tail.append(contentsOf: buffer.readableBytesView)
            if tail.firstRange(of: [13, 10, 13, 10]) != nil {
                headArrived = true
            } else if tail.count > 3 {
                tail.removeFirst(tail.count - 3)
            }
        }
        context.fireChannelRead(data)
        if headArrived {
            tail = []
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent, !headArrived {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
