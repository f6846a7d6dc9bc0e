import HummingbirdWSClient
import Synchronization

/// Thrown when a push client waited longer than its timeout.
public struct PushTimeout: Error, CustomStringConvertible {
    public let awaited: String
    public let timeout: Duration
    public var description: String { "Timed out after \(timeout) waiting for \(awaited)" }
}

/// Thrown when a push stream ended (or could not be used) while something was still awaited.
public struct PushClientError: Error, CustomStringConvertible {
    public let description: String
}

/// Buffered inbound items plus the waiters for them. Every change bumps `version` and wakes all
/// waiters, which re-check their condition, so a reader can take any item, not only the first.
final class PushInbox<Element: Sendable>: Sendable {
    struct State: Sendable {
        var items: [Element] = []
        var received = 0
        var comments = 0
        var ended = false
        var closeFrame: WebSocketCloseFrame?
        var endError: (any Error)?
        var version = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func read<T: Sendable>(_ body: (State) -> T) -> T { state.withLock { body($0) } }

    func update(_ body: (inout State) -> Void) {
        let waiters = state.withLock { s in
            body(&s)
            s.version += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `check` under the lock now and after every change until it returns a value (or throws).
    func wait<T: Sendable>(
        timeout: Duration, for awaited: String, _ check: (inout State) throws -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (value, version) = try state.withLock { s throws -> (T?, Int) in (try check(&s), s.version) }
            if let value { return value }
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else { throw PushTimeout(awaited: awaited, timeout: timeout) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.suspend(after: version) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// The first buffered item that matches `predicate`, dropping those before it. Once the stream
    /// ended with no such item left, throws what `ended` makes of its state.
    func take(
        timeout: Duration, for awaited: String, where predicate: (Element) -> Bool, ended: (State) -> any Error
    ) async throws -> Element {
        try await wait(timeout: timeout, for: awaited) { s in
            while !s.items.isEmpty {
                let item = s.items.removeFirst()
                if predicate(item) { return item }
            }
            if s.ended { throw ended(s) }
            return nil
        }
    }

    /// Suspends until the state changes after `version` or the task is cancelled.
    private func suspend(after version: Int) async {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checking cancellation under the lock closes the race with `onCancel`.
                let resumeNow = state.withLock { s in
                    if s.version != version || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
