import LayerServer
import Logging
import NIOCore
import NIOPosix
import STUNCodec
import ServiceLifecycle

/// The STUN server (RFC 8489 Binding) that tells each device the address and port the Internet
/// sees it at: one UDP socket whose every datagram is answered, or not, by ``STUNResponder``.
/// On `::` the socket takes IPv6 and IPv4 clients alike (IPv4 ones as mapped addresses, which
/// are answered with their IPv4 address). Each source address gets a bounded number of answers and
/// ports below 1024 none (``STUNSourceLimiter``). It runs until the service group shuts down or
/// its task is cancelled, then closes the socket.
public struct STUNServer: Service {
    let host: String
    let port: Int
    let responder: STUNResponder
    let sourceLimit: RateLimiter.Limit?
    let group: any EventLoopGroup
    let logger: Logger
    let onBound: @Sendable (Int) -> Void

    /// `port` 0 picks a free port; `onBound` learns the port bound, once the socket is open.
    /// `sourceLimit` bounds the answers to each source address (nil: any number).
    public init(
        host: String, port: Int, software: String = "Layerline STUN",
        sourceLimit: RateLimiter.Limit? = VoIPSettings().stunSourceLimit,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger = Logger(label: "voip.stun"),
        onBound: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.responder = STUNResponder(software: software)
        self.sourceLimit = sourceLimit
        self.group = group
        self.logger = logger
        self.onBound = onBound
    }

    public func run() async throws {
        let responder = self.responder
        let logger = self.logger
        let sourceLimit = self.sourceLimit
        let channel = try await DatagramBootstrap(group: group)
            // Up to 32 datagrams per system call (recvmmsg), 2 KB each: larger than any path's MTU,
            // which a STUN message over UDP stays below; a longer one arrives cut short and is
            // dropped as malformed. One such call per wake-up, so that a quiet socket costs no
            // empty read: epoll wakes the loop again at once while datagrams wait.
            .channelOption(.datagramVectorReadMessageCount, value: 32)
            .channelOption(.maxMessagesPerRead, value: 1)
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 32 * 2048))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        STUNHandler(responder: responder, limiter: STUNSourceLimiter(limit: sourceLimit), logger: logger))
                }
            }
            .bind(host: host, port: port)
            .get()
        let bound = channel.localAddress?.port ?? port
        logger.info("STUN server listening", metadata: ["host": "\(host)", "port": "\(bound)"])
        onBound(bound)
        await withTaskCancellationOrGracefulShutdownHandler {
            try? await channel.closeFuture.get()
        } onCancelOrGracefulShutdown: {
            channel.close(promise: nil)
        }
    }
}
