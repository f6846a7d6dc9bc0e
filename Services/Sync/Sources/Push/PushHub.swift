import Foundation
import Synchronization

/// The devices connected to this replica, by user, and which users have changes waiting to be
/// fetched from their changelogs. The fan-out takes the waiting users in batches; notifications
/// from PostgreSQL and devices that drained their outbox add to them.
final class PushHub: Sendable {
    /// This replica, as the `sync.devices` table knows it.
    let replicaID = UUID()
    private let state = Mutex(State())

    private struct State {
        var users: [UserKey: [Int64: PushDevice]] = [:]
        var waiting: Set<UserKey> = []
        var wakeUp: CheckedContinuation<Void, Never>?
        var lastID: Int64 = 0
        var stopped = false
    }

    func nextDeviceID() -> Int64 {
        state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
    }

    /// Adds a device; from now on changes of its user are offered to it.
    func add(_ device: PushDevice) {
        state.withLock { $0.users[device.key, default: [:]][device.id] = device }
        markWaiting([device.key])
    }

    func remove(_ device: PushDevice) {
        state.withLock { state in
            state.users[device.key]?[device.id] = nil
            if state.users[device.key]?.isEmpty ?? false { state.users[device.key] = nil }
        }
    }

    func devices(of key: UserKey) -> [PushDevice] {
        state.withLock { state in state.users[key].map { Array($0.values) } ?? [] }
    }

    var allDevices: [PushDevice] {
        state.withLock { state in state.users.values.flatMap(\.values) }
    }

    var connectedUsers: [UserKey] {
        state.withLock { state in Array(state.users.keys) }
    }

    /// Notes that these users' changelogs may have grown; users with no device here are ignored.
    func markWaiting(_ keys: some Sequence<UserKey>) {
        let wakeUp = state.withLock { state -> CheckedContinuation<Void, Never>? in
            for key in keys where state.users[key] != nil { state.waiting.insert(key) }
            guard !state.waiting.isEmpty else { return nil }
            defer { state.wakeUp = nil }
            return state.wakeUp
        }
        wakeUp?.resume()
    }

    /// Waits until some users have changes waiting and takes them all; nil once stopped.
    func takeWaiting() async -> Set<UserKey>? {
        while true {
            let taken = state.withLock { state -> Set<UserKey>?? in
                if state.stopped { return .some(nil) }
                guard !state.waiting.isEmpty else { return nil }
                defer { state.waiting = [] }
                return .some(state.waiting)
            }
            if let taken { return taken }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.stopped || !state.waiting.isEmpty { return true }
                    state.wakeUp = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Ends the fan-out and closes every device.
    func stop() {
        let (devices, wakeUp) = state.withLock { state in
            state.stopped = true
            defer { state.wakeUp = nil }
            return (state.users.values.flatMap(\.values), state.wakeUp)
        }
        wakeUp?.resume()
        for device in devices { device.close(.shuttingDown) }
    }

    /// Offers an ephemeral packet to every device of these users here (dropped by a full one).
    func deliver(_ packet: EphemeralPacket, to keys: some Sequence<UserKey>) {
        for key in Set(keys) {
            for device in devices(of: key) { device.offer(packet) }
        }
    }
}
