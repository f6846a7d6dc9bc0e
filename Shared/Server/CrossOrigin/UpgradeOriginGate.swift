import Foundation
import LayerModels
import NIOCore
import NIOHTTP1

/// Turns a WebSocket upgrade from a page whose origin no list allows into a plain request that
/// the listener answers 403 `access_denied` (``CrossOriginResponder`` does, on the header
/// ``refusedHeader``), before the upgrade handler sees it. A browser opens a WebSocket from any
/// page without asking the server first, so this is where a page of another site is kept from
/// riding a user's session; a declined upgrade could otherwise only be answered with the
/// WebSocket library's empty 400. It looks at the first request of a connection (the only one
/// that may upgrade) and then leaves the pipeline.
final class UpgradeOriginGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Marks a request whose upgrade was refused; it carries the page's origin.
    static let refusedHeader = "Layer-Refused-Upgrade-Origin"

    /// Whether a page on this origin (the first) may connect to the authority (the second, from
    /// `Host`) at all.
    let allows: @Sendable (String, String?) async -> Bool
    private var checking = false
    private var held: [HTTPServerRequestPart] = []

    init(allows: @escaping @Sendable (String, String?) async -> Bool) {
        self.allows = allows
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        if checking {
            held.append(part)
            return
        }
        guard case .head(let head) = part,
            head.headers["upgrade"].contains(where: { $0.lowercased() == "websocket" }),
            let origin = head.headers["origin"].first
        else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        checking = true
        held.append(part)
        let allows = self.allows
        let decided = context.eventLoop.makePromise(of: Bool.self)
        let authority = head.headers["host"].first
        decided.completeWithTask { await allows(origin, authority) }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        decided.futureResult.assumeIsolated().whenSuccess { allowed in
            var head = head
            if !allowed {
                head.headers.remove(name: "upgrade")
                head.headers.replaceOrAdd(name: "connection", value: "close")
                head.headers.replaceOrAdd(name: Self.refusedHeader, value: origin)
            }
            self.release(head: head, context: loopBound.value)
        }
    }

    /// Passes the request on, its head as decided, and leaves.
    private func release(head: HTTPRequestHead, context: ChannelHandlerContext) {
        checking = false
        var held = self.held
        self.held = []
        held[0] = .head(head)
        for part in held { context.fireChannelRead(wrapInboundOut(part)) }
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
