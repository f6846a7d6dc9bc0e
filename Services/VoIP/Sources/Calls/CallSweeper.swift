import Foundation
import LayerServer
import Logging
import ServiceLifecycle

/// The timers of calls, on every replica: a ringing call whose time is up becomes `missed`, and
/// one whose caller has had no device online for the grace period becomes `cancelled`. Each move
/// is a conditional `UPDATE`, so it happens once however many replicas sweep. A change whose
/// signal was lost is signalled again. While no call rings and every move was signalled, it sleeps
/// until a call rings or moves through this replica (``Calls/sweeps``), looking at most every
/// `longestSleep` for calls of a replica that is gone.
struct CallSweeper: Service {
    let calls: Calls
    let graceSeconds: Int
    let logger: Logger
    var tick: Duration = .milliseconds(250)
    var presenceEvery: Duration = .seconds(2)
    var longestSleep: Duration = .seconds(30)

    func run() async throws {
        var lastPresence = ContinuousClock.now
        var idle = false
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if idle {
                _ = await cancelWhenGracefulShutdown { await calls.sweeps.wait(upTo: longestSleep) }
                lastPresence = .now - presenceEvery
            } else {
                try? await Task.sleep(for: tick)
            }
            do {
                for call in try await calls.repository.missDue(logger: logger) { await calls.notify(call, logger: logger) }
                if ContinuousClock.now - lastPresence >= presenceEvery {
                    lastPresence = .now
                    try await checkCallers()
                    for call in try await calls.repository.unsignalled(olderThan: 2, logger: logger) {
                        await calls.notify(call, logger: logger)
                    }
                    idle = try await !calls.repository.needsSweeping(logger: logger)
                }
            } catch {
                idle = false
                logger.warning("Sweeping calls failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    /// Notes callers that have no device left, clears those back, and cancels the calls of
    /// callers gone for longer than the grace period.
    func checkCallers() async throws {
        let ringing = try await calls.repository.ringingWithOnlineCaller(logger: logger)
        for (app, list) in Dictionary(grouping: ringing, by: \.app) {
            let devices = try await calls.signals.devices(app: app, users: Array(Set(list.map(\.caller))), logger: logger)
            let gone = list.filter { (devices[$0.caller] ?? 0) == 0 }
            let back = list.filter { (devices[$0.caller] ?? 0) > 0 && $0.goneSince != nil }
            try await calls.repository.setCallerGone(app: app, ids: gone.map(\.id), gone: true, logger: logger)
            try await calls.repository.setCallerGone(app: app, ids: back.map(\.id), gone: false, logger: logger)
        }
        for call in try await calls.repository.cancelAbandoned(graceSeconds: graceSeconds, logger: logger) {
            await calls.notify(call, logger: logger)
        }
    }
}
