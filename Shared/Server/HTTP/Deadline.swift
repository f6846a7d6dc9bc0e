import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// Thrown by ``withDeadline(_:_:)`` when the operation did not finish in time.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public let limit: Duration
    public var description: String { "The operation did not finish within \(limit)" }
}

/// Runs `operation` and returns its result, or throws ``DeadlineExceeded`` once `limit` has
/// passed, whatever the operation is waiting for.
///
/// The operation runs in a task of its own, so that the caller can leave it behind: a task that
/// is cancelled still has to finish before its parent returns, and an operation stuck on a
/// promise nobody fulfils never would (postgres-nio writes a query to a channel that has just
/// closed without a promise, so the query waits forever; the fix, vapor/postgres-nio#487, was
/// reverted). On timeout the operation is cancelled and abandoned.
public func withDeadline<T: Sendable>(
    _ limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let task = Task { try await operation() }
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            let timer = Task {
                try await Task.sleep(for: limit)
                if race.finish(.failure(DeadlineExceeded(limit: limit))) { task.cancel() }
            }
            Task {
                let result = await task.result
                timer.cancel()
                race.finish(result)
            }
        }
    } onCancel: {
        task.cancel()
        race.finish(.failure(CancellationError()))
    }
}

/// The continuation of ``withDeadline(_:_:)``, resumed once by whichever side finishes first.
private final class DeadlineRace<T: Sendable>: Sendable {
    private enum State {
        case waiting
        case started(CheckedContinuation<T, any Error>)
        /// Finished before the continuation was installed (cancelled at once).
        case finished(Result<T, any Error>)
        case resumed
    }
    private let state = Mutex<State>(.waiting)

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { state in
            if case .finished(let result) = state {
                state = .resumed
                return result
            }
            state = .started(continuation)
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Resumes the caller with `result` unless it was resumed already; true if this call did.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let continuation: CheckedContinuation<T, any Error>? = state.withLock { state in
            switch state {
            case .waiting:
                state = .finished(result)
                return nil
            case .started(let continuation):
                state = .resumed
                return continuation
            case .finished, .resumed:
                return nil
            }
        }
        guard let continuation else { return false }
        continuation.resume(with: result)
        return true
    }
}

/// Answers every request within `limit`: when the routes have not produced a response by then
/// (a database that does not answer, a pool with no free connection), the client gets 503
/// `service_unavailable` with `Retry-After`, and the work left behind is cancelled. Streamed
/// response bodies are not bounded (the response is given by then), nor are the requests
/// `isExempt` names, which stream a request body of their own and bound it themselves.
public struct DeadlineResponder<Base: HTTPResponder>: HTTPResponder where Base.Context == LayerRequestContext {
    public typealias Context = LayerRequestContext
    let base: Base
    let limit: Duration
    let isExempt: @Sendable (HTTPRequest) -> Bool
    /// The largest body a bounded request may have: 4 MB (`POST /sync` takes the most), unless
    /// its service names a larger one for it (a bulk import); each route has its own limit within.
    let largestBody: @Sendable (HTTPRequest) -> Int
    /// A longer deadline for the requests that need one (a bulk import), nil for the others.
    let longerLimit: @Sendable (HTTPRequest) -> Duration?

    public init(
        _ base: Base, limit: Duration, largestBody: @escaping @Sendable (HTTPRequest) -> Int = { _ in 4 * 1024 * 1024 },
        longerLimit: @escaping @Sendable (HTTPRequest) -> Duration? = { _ in nil },
        isExempt: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }
    ) {
        self.base = base
        self.limit = limit
        self.largestBody = largestBody
        self.longerLimit = longerLimit
        self.isExempt = isExempt
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        if isExempt(request.head) { return try await base.respond(to: request, context: context) }
        // The body is read first, at the client's pace (the read timeout bounds it), and handed
        // to the routes whole: work left behind at the deadline must not read on from a
        // connection that has moved on to its next request.
        var request = request
        let largestBody = self.largestBody(request.head)
        do {
            let body = try await request.body.collect(upTo: largestBody)
            request.body = .init(buffer: body)
        } catch is NIOTooManyBytesError {
            return try APIError(.requestTooLarge, "The request body is larger than \(largestBody) bytes.")
                .response(from: request, context: context)
        }
        let base = self.base
        do {
            let limit = longerLimit(request.head).map { max($0, self.limit) } ?? self.limit
            return try await withDeadline(limit) { [request] in try await base.respond(to: request, context: context) }
        } catch let exceeded as DeadlineExceeded {
            context.logger.warning(
                "Request deadline passed; answered 503",
                metadata: ["method": "\(request.method)", "limit": "\(exceeded.limit)"])
            return try APIError(
                .serviceUnavailable, "The request did not complete in time; try again.",
                headers: [.retryAfter: "1"]
            ).response(from: request, context: context)
        }
    }
}
