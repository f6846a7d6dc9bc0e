import Logging
import ServiceLifecycle
import Synchronization

/// Opens once the host has applied every migration of its services and prepared them.
final class MigrationGate: Sendable {
    private struct State {
        var isOpen = false
        var next = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open (at once if it is), or when the task is cancelled.
    func opened() async {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

/// A background service that starts only once its schema is there: the host applies the
/// migrations as the server starts, and work that ran beside them would meet missing tables.
/// Stopped before the gate opens, it never starts.
struct AfterMigrations: Service {
    let base: any Service
    let gate: MigrationGate

    func run() async throws {
        let gate = self.gate
        await cancelWhenGracefulShutdown { await gate.opened() }
        // Stopped before the migrations were done: nothing to start.
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await base.run()
    }
}
