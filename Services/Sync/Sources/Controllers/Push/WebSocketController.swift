import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import LayerModels
import LayerServer
import Logging
import NIOCore
import ServiceLifecycle

/// `GET /websocket` (reference 5): a session (`?session_token=` or `Authorization`), a
/// `layer-X.Y` subprotocol naming the API version of its packets (1.0, 2.0 or 3.0; the highest
/// one offered is taken), and optionally `anchor=<seq>` to receive every change after it.
/// A declined upgrade can only be an empty 400 (the WebSocket library's), which tells a client
/// nothing, so every upgrade is accepted and a bad one is closed at once with `4000 + the HTTP
/// status` the same request would get (4401 no session, 4406 no subprotocol, 4422 bad anchor) and
/// the error's id and message as the reason. A plain GET gets that error as JSON. A browser's
/// upgrade from a page whose origin may not use the suite at all never gets here: the listener
/// answers it 403 (``UpgradeOriginGate``); one from an origin that another app allows, but not
/// the session's, is closed with 4403.
struct WebSocketController {
    /// The subprotocols served, one per Client API version.
    static let subprotocols = APIVersion.clientAPI.map { "layer-\($0.rawValue)" }
    let push: Push
    let domain: SyncDomain
    let authenticator: SessionAuthenticator
    let origins: AllowedOrigins

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("websocket") { request, context -> Response in
            _ = try await accept(request, context: context)
            throw APIError(
                .invalidRequest, "GET /websocket opens a WebSocket: send Connection: Upgrade and Upgrade: websocket.",
                data: .object(["header": .string("Upgrade")]))
        }
    }

    /// At `/websocket`, and at `/` as well: the original moved its sockets to the root of a host
    /// of their own (`wss://websockets.layer.com/?session_token=…`), where the SDKs' default
    /// configuration still points; a plain `GET /` stays discovery.
    func addWebSocketRoutes(to router: some RouterMethods<LayerRequestContext>) {
        for path in ["websocket", "/"] {
            router.ws(RouterPath(path)) { request, _ in
                offeredVersion(request).map { .upgrade([.secWebSocketProtocol: "layer-\($0.rawValue)"]) } ?? .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                try await run(inbound: inbound, outbound: outbound, context: context)
            }
        }
    }

    /// The highest API version among the subprotocols the client offers.
    private func offeredVersion(_ request: Request) -> APIVersion? {
        request.headers[values: .secWebSocketProtocol]
            .flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .compactMap { $0.hasPrefix("layer-") ? APIVersion(rawValue: String($0.dropFirst("layer-".count))) : nil }
            .filter(APIVersion.clientAPI.contains).max()
    }

    /// The checks of an upgrade after the session: subprotocol, then anchor.
    private func accept(_ request: Request, context: LayerRequestContext) async throws -> Int64 {
        guard offeredVersion(request) != nil else {
            throw APIError(
                .invalidHeader,
                "Ask for one of the subprotocols \(Self.subprotocols.joined(separator: ", ")) in Sec-WebSocket-Protocol.",
                data: .object(["header": .string("Sec-WebSocket-Protocol")]))
        }
        let session = try context.requireSession()
        try await origins.requireAllowed(request, app: session.appID, logger: context.logger)
        return try await push.startSeq(
            app: session.appID, user: session.userID, anchor: try anchor(request), property: "anchor", logger: context.logger)
    }

    /// Authenticates the upgrade request as the session middleware does for other routes.
    private func admit(_ request: Request, context: LayerRequestContext) async throws -> (LayerRequestContext, Int64) {
        var admitted: LayerRequestContext?
        _ = try await authenticator.handle(request, context: context) { _, authenticated in
            admitted = authenticated
            return Response(status: .ok)
        }
        guard let admitted else { throw APIError(.authenticationRequired, "A session is required.") }
        return (admitted, try await accept(request, context: admitted))
    }

    private func anchor(_ request: Request) throws -> Int64? {
        guard let text = request.uri.queryParameters["anchor"] else { return nil }
        guard let anchor = Int64(text) else { throw APIError.invalid("anchor", "anchor is a changelog seq, 0 or more.") }
        return anchor
    }

    /// Admits the upgrade and registers the device.
    private func open(
        _ request: Request, context: LayerRequestContext
    ) async throws -> (device: PushDevice, session: AuthenticatedSession, context: LayerRequestContext) {
        let (admitted, seq) = try await admit(request, context: context)
        guard let session = admitted.session,
            case .sessionToken(let token) = LayerAuthorization(request: request, allowsQueryToken: true)
        else {
            throw APIError(.authenticationRequired, "A WebSocket needs a session token, not an identity token.")
        }
        let device = try await push.open(
            .webSocket, session: session, token: token, urls: domain.views.urls(request),
            version: offeredVersion(request) ?? .v3_0, after: seq, logger: admitted.logger)
        return (device, session, admitted)
    }

    private func run(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter,
        context: WebSocketRouterContext<LayerRequestContext>
    ) async throws {
        let request = context.request
        let logger = context.requestContext.logger
        let opened: (device: PushDevice, session: AuthenticatedSession, context: LayerRequestContext)
        do {
            // Deep work (the session check over HTTP, the database) runs in a task of its own:
            // a task keeps the memory of its deepest call chain until it ends, and this one
            // lives as long as the connection.
            opened = try await Task { try await open(request, context: context.requestContext) }.value
        } catch {
            let apiError = ErrorMiddleware(routes: RouteTable())
                .apiError(for: error, request: request, context: context.requestContext)
            let reason = String("\(apiError.body.id): \(apiError.body.message)".utf8.prefix(120)) ?? apiError.body.id
            // Some clients start reading frames only after they report the socket open: a close
            // sent in the same instant as the upgrade can be lost to them.
            try await Task.sleep(for: .milliseconds(100))
            try await outbound.close(.unknown(4000 + UInt16(apiError.status.code)), reason: reason)
            return
        }
        let (device, session, requestContext) = opened
        let channel = requestContext.channel
        // A client too far behind is most likely not reading at all: a close frame would not get
        // through, so the connection is cut.
        device.onClose { reason in if reason == .fellBehind { channel.close(promise: nil) } }
        let requests = WebSocketRequests(
            push: push, domain: domain, device: device, session: session, request: request, context: requestContext)
        do {
            // On SIGTERM the server drains its connections: a socket is told it is going away.
            try await withGracefulShutdownHandler {
                // The writer runs beside; this task, which exists anyway, reads.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await write(device, to: outbound) }
                    for try await message in inbound.messages(maxSize: push.settings.maxFrame) {
                        guard case .text(let text) = message else {
                            guard requests.fail(nil, nil, APIError(.invalidRequest, "Packets are JSON text frames, not binary."))
                            else { break }
                            continue
                        }
                        // In a task of its own, for the same reason as the upgrade's checks.
                        // Its answers are rendered in the connection's version.
                        let handled = Task {
                            await APIVersion.$current.withValue(device.version) { await requests.handle(text) }
                        }
                        guard await handled.value else { break }
                    }
                    // A device the server closed has its writer send the close frame first, unless
                    // the client stopped reading and the writer cannot finish.
                    if device.closeReason != nil {
                        group.addTask { try? await Task.sleep(for: .seconds(5)) }
                        try await group.next()
                    }
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                device.close(.shuttingDown)
            }
        } catch {
            logger.debug("WebSocket ended", metadata: ["error": "\(error)"])
        }
        await Task { await push.close(device, logger: logger) }.value
    }

    /// Writes what is queued for the device, each packet with the connection's next counter.
    private func write(_ device: PushDevice, to outbound: WebSocketOutboundWriter) async throws {
        var counter = 0
        func send(_ type: String, _ timestamp: String, _ body: String) async throws {
            try await outbound.write(.text(Packets.envelope(type: type, counter: counter, timestamp: timestamp, body: body)))
            counter += 1
        }
        for await item in device.items {
            guard device.closeReason == nil else { break }
            switch item {
            case .change(let change):
                for packet in change.packets(in: device.version) {
                    try await send(packet.type, change.timestamp, push.filled(packet.body, for: device))
                }
            case .ephemeral(let packet):
                try await send(packet.type, LayerTimestamp.string(Date()), push.filled(packet.body, for: device))
            case .response(let body):
                try await send("response", LayerTimestamp.string(Date()), body)
            case .counter(let requestID):
                let body = Packets.response(
                    requestID: requestID, method: "Counter.read", success: true,
                    data: JSONValue.object(["counter": .number(Double(counter - 1))]))
                try await send("response", LayerTimestamp.string(Date()), body)
            case .keepAlive:
                break
            }
            push.sent(device)
        }
        if let reason = device.closeReason, reason != .fellBehind {
            try await outbound.close(.unknown(reason.code), reason: reason.text)
        }
    }
}

extension HTTPField.Name {
    static let secWebSocketProtocol = Self("Sec-WebSocket-Protocol")!
}
