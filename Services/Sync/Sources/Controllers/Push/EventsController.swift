import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer
import NIOCore
import ServiceLifecycle

/// `GET /events`: the user's changes as Server-Sent Events, for curl and other plain HTTP
/// clients. Each change is an event whose `id` is its changelog seq, `event` its type and `data`
/// the operation as `POST /sync` gives it; `Last-Event-ID` (or `?anchor=`) resumes right after
/// it. Ephemeral packets (typing, presence, signals) come as events without an id. A comment
/// every few seconds keeps proxies from cutting an idle stream.
struct EventsController {
    let push: Push
    let domain: SyncDomain
    let origins: AllowedOrigins

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("events", use: events)
    }

    @Sendable func events(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        guard case .sessionToken(let token) = LayerAuthorization(request: request, allowsQueryToken: true) else {
            throw APIError(.authenticationRequired, "Event streams take a session token.")
        }
        // An EventSource of another site's page would be refused its answer by CORS, but not
        // before the stream had registered a device.
        try await origins.requireAllowed(request, app: session.appID, logger: context.logger)
        let (anchor, property) = try resumePoint(request)
        let seq = try await push.startSeq(
            app: session.appID, user: session.userID, anchor: anchor, property: property, logger: context.logger)
        let device = try await push.open(
            .events, session: session, token: token, urls: domain.views.urls(request), after: seq, logger: context.logger)
        let channel = context.channel
        device.onClose { reason in if reason == .fellBehind { channel.close(promise: nil) } }
        let push = self.push
        let logger = context.logger
        let body = ResponseBody { writer in
            do {
                try await writer.write(ByteBuffer(string: "retry: 1000\n: connected\n\n"))
                try await withGracefulShutdownHandler {
                    for await item in device.items {
                        guard device.closeReason == nil else { break }
                        try await writer.write(ByteBuffer(string: Self.event(item, filled: { push.filled($0, for: device) })))
                        push.sent(device)
                    }
                } onGracefulShutdown: {
                    device.close(.shuttingDown)
                }
                if let reason = device.closeReason, reason != .fellBehind {
                    try await writer.write(ByteBuffer(string: ": closed: \(reason.text)\n\n"))
                }
                try await writer.finish(nil)
            } catch {
                await push.close(device, logger: logger)
                throw error
            }
            await push.close(device, logger: logger)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// `Last-Event-ID` as the reconnecting EventSource sends it, else `?anchor=`.
    private func resumePoint(_ request: Request) throws -> (Int64?, String) {
        if let text = request.headers[HTTPField.Name("Last-Event-ID")!] {
            guard let seq = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                throw APIError(
                    .invalidHeader, "Last-Event-ID is the id of an event of this stream.",
                    data: .object(["header": .string("Last-Event-ID")]))
            }
            return (seq, "Last-Event-ID")
        }
        guard let text = request.uri.queryParameters["anchor"] else { return (nil, "anchor") }
        guard let seq = Int64(text) else { throw APIError.invalid("anchor", "anchor is a changelog seq, 0 or more.") }
        return (seq, "anchor")
    }

    /// The text of one item; `filled` gives pushed JSON the device's own base.
    static func event(_ item: PushItem, filled: (String) -> String) -> String {
        switch item {
        case .change(let change):
            "id: \(change.seq)\nevent: \(change.type)\ndata: \(filled(change.operation))\n\n"
        case .ephemeral(let packet):
            "event: \(packet.event)\ndata: \(filled(packet.body))\n\n"
        case .response(let body):
            "event: response\ndata: \(body)\n\n"
        case .counter, .keepAlive:
            ": keep-alive\n\n"
        }
    }
}
