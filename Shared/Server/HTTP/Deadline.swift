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
