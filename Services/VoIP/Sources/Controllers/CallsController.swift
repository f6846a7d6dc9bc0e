import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// The call routes of a signed-in user: place, act on, read and list calls.
struct CallsController: Sendable {
    let calls: Calls
    /// Each user's allowance of new calls: a call rings someone else's every device.
    let placements: RateLimiter

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.group()
            .add(middleware: RateLimitMiddleware(placements, per: .user, message: "You placed too many calls; try again later."))
            .post("calls", use: place)
        router.get("calls", use: list)
        router.get("calls/:call", use: read)
        for action in [CallAction.answer, .reject, .cancel, .hangup] {
            router.post("calls/:call/\(action.rawValue)") { request, context in
                try await act(action, request, context)
            }
        }
    }

    /// Request bodies are small: a token, a device id and a few candidates.
    static let bodyLimit = 16 * 1024

    @Sendable func place(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let placement = try CallInput.placement(try await request.decodeJSON(JSONValue.self, limit: Self.bodyLimit))
        let call = try await calls.place(placement, by: session.userID, app: session.appID, logger: context.logger)
        return try Response.json(call.json, status: .created)
    }

    @Sendable func read(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let id = try context.parameters.layerID("call", as: .calls).uuid
        return try Response.json(
            try await calls.call(id, app: session.appID, user: session.userID, logger: context.logger).call.json)
    }

    @Sendable func list(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let paging = try Paging(request, collection: .calls)
        let page = try await calls.repository.calls(
            app: session.appID, user: session.userID, filter: try CallFilter(request), paging: paging, logger: context.logger)
        return try Response.list(Page(items: page.calls.map(\.json), total: page.total))
    }

    func act(_ action: CallAction, _ request: Request, _ context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        let id = try context.parameters.layerID("call", as: .calls).uuid
        let body = try await Self.optionalBody(request)
        var answer: CallInput.Answer?
        if action == .answer {
            answer = try CallInput.answer(body ?? .object([:]))
        } else {
            try CallInput.empty(body)
        }
        let call = try await calls.act(
            action, on: id, app: session.appID, user: session.userID, answer: answer, logger: context.logger)
        return try Response.json(call.json)
    }

    /// A JSON body if one was sent (actions without fields may send none).
    static func optionalBody(_ request: Request) async throws -> JSONValue? {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: bodyLimit)
        } catch is NIOTooManyBytesError {
            throw APIError(.requestTooLarge, "The request body is larger than \(bodyLimit) bytes.")
        }
        guard buffer.readableBytes > 0 else { return nil }
        return try Request.decodeJSON(JSONValue.self, from: buffer)
    }
}
