import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What the routes of a group may receive and how long they have to answer. Set on the group, beside
/// the routes it governs (``LimitedRoutes``), so that a renamed or moved route keeps its limits.
public struct RequestLimits: Sendable {
    /// The largest body, read whole before the route runs (413 `request_too_large` past it); nil
    /// for routes that read their body as it arrives and bound each read themselves.
    public var largestBody: Int?
    /// How long the route has to answer (then 503 `service_unavailable` with `Retry-After`, and
    /// the work left behind is cancelled); nil for routes that bound their own work.
    public var deadline: Duration?

    public init(largestBody: Int?, deadline: Duration?) {
        self.largestBody = largestBody
        self.deadline = deadline
    }

    /// The most any route reads whole unless its group says otherwise: `POST /sync` takes the
    /// most. Each route has its own limit within.
    public static let usualLargestBody = 4 * 1024 * 1024

    /// The limits of most routes: a body of at most 4 MB and an answer within `deadline`
    /// (`LAYER_REQUEST_TIMEOUT_MS`).
    public static func usual(deadline: Duration) -> RequestLimits {
        RequestLimits(largestBody: usualLargestBody, deadline: deadline)
    }

    /// Routes that read a long body as it arrives (an upload, a bulk import) and bound their own
    /// reads and work: a deadline for the whole request would cut a large transfer short.
    public static let streaming = RequestLimits(largestBody: nil, deadline: nil)
}

/// Routes of the listener's router under one ``RequestLimits``: a route added here, or to a group
/// made from it (with its middleware), reads its body and answers within those limits. Every
/// service adds its routes through one (``LayerService/addRoutes(to:)``); the routes that need other
/// limits take a group of their own with ``with(_:)``.
public struct LimitedRoutes: RouterMethods {
    public typealias Context = LayerRequestContext

    let parent: any RouterMethods<LayerRequestContext>
    public let limits: RequestLimits
    private var middlewares: [any MiddlewareProtocol<Request, Response, Context>] = []

    public init(_ parent: any RouterMethods<LayerRequestContext>, limits: RequestLimits) {
        self.parent = parent
        self.limits = limits
    }

    /// The same routes under other limits.
    public func with(_ limits: RequestLimits) -> LimitedRoutes {
        LimitedRoutes(parent, limits: limits)
    }

    /// Middleware for the routes added after it, within the limits (it runs once the body is read
    /// and the deadline runs).
    public func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> LimitedRoutes {
        var routes = self
        routes.middlewares.append(middleware)
        return routes
    }

    @discardableResult public func on<Responder: HTTPResponder>(
        _ path: RouterPath, method: HTTPRequest.Method, responder: Responder
    ) -> LimitedRoutes where Responder.Context == Context {
        var wrapped: any HTTPResponder<Context> = responder
        for middleware in middlewares.reversed() { wrapped = MiddlewareStep(middleware: middleware, next: wrapped) }
        parent.on(path, method: method, responder: LimitedResponder(base: wrapped, limits: limits))
        return self
    }
}

/// One middleware of a ``LimitedRoutes`` before the responder it leads to.
private struct MiddlewareStep: HTTPResponder {
    let middleware: any MiddlewareProtocol<Request, Response, LayerRequestContext>
    let next: any HTTPResponder<LayerRequestContext>

    func respond(to request: Request, context: LayerRequestContext) async throws -> Response {
        try await middleware.handle(request, context: context) { request, context in
            try await next.respond(to: request, context: context)
        }
    }
}

/// A route within its ``RequestLimits``. The body is read first, at the client's pace (the read
/// timeout bounds it), and handed to the route whole: work left behind at the deadline must not
/// read on from a connection that has moved on to its next request. The route then runs in a
/// task of its own (``withDeadline(_:_:)``), abandoned when the deadline passes.
struct LimitedResponder: HTTPResponder {
    let base: any HTTPResponder<LayerRequestContext>
    let limits: RequestLimits

    func respond(to request: Request, context: LayerRequestContext) async throws -> Response {
        guard let largestBody = limits.largestBody else { return try await base.respond(to: request, context: context) }
        var request = request
        do {
            request.body = .init(buffer: try await request.body.collect(upTo: largestBody))
        } catch is NIOTooManyBytesError {
            throw APIError(.requestTooLarge, "The request body is larger than \(largestBody) bytes.")
        }
        guard let deadline = limits.deadline else { return try await base.respond(to: request, context: context) }
        let base = self.base
        do {
            return try await withDeadline(deadline) { [request] in try await base.respond(to: request, context: context) }
        } catch let exceeded as DeadlineExceeded {
            context.logger.warning(
                "Request deadline passed; answered 503", metadata: ["method": "\(request.method)", "limit": "\(exceeded.limit)"])
            throw APIError(.serviceUnavailable, "The request did not complete in time; try again.", headers: [.retryAfter: "1"])
        }
    }
}
