import Synchronization

/// Wakes one sleeping background worker: `ring()` ends its current (or next) `wait(upTo:)` at
/// once. Workers wait on an alarm rather than poll, so that an idle process does no work: each is
/// rung when something it serves happens (in this process, or on another replica through a
/// PostgreSQL notice), and otherwise sleeps until its next due time.
public final class Alarm: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    public init() {}

    public func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when rung (or rung since the last wait), after `duration`, or when cancelled;
    /// true when it was rung.
    @discardableResult
    public func wait(upTo duration: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(for: duration)
                return false
            }
            group.addTask {
                await self.rung()
                return !Task.isCancelled
            }
            let rung = await group.next() ?? false
            group.cancelAll()
            return rung
        }
    }

    private func rung() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
