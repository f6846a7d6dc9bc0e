import Logging
import NIOCore
import STUNCodec

/// Answers each datagram the STUN server's socket reads, writing the answers as they come and
/// sending them together once the batch of reads ends (several per `sendmmsg`).
final class STUNHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let responder: STUNResponder
    private var limiter: STUNSourceLimiter
    private let logger: Logger
    private var unflushed = false

    init(responder: STUNResponder, limiter: STUNSourceLimiter, logger: Logger) {
        self.responder = responder
        self.limiter = limiter
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let request = unwrapInboundIn(data)
        guard let sender = STUNAddress(request.remoteAddress) else { return }
        let size = responder.maximumAnswerSize
        var answer = context.channel.allocator.buffer(capacity: size)
        let written = answer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { output in
            request.data.withUnsafeReadableBytes { responder.answer(to: $0, from: sender, into: output) ?? 0 }
        }
        // Only what would be answered counts against the sender's allowance.
        guard written > 0, limiter.allows(sender) else { return }
        logger.trace("STUN answer", metadata: ["to": "\(sender)"])
        context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: request.remoteAddress, data: answer)), promise: nil)
        unflushed = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard unflushed else { return }
        unflushed = false
        context.flush()
    }

    /// A client that went away makes the next send fail (ICMP port unreachable comes back as
    /// ECONNREFUSED); the socket itself is fine, and NIO closes it on the errors where it is not.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("STUN socket error", metadata: ["error": "\(error)"])
    }
}
