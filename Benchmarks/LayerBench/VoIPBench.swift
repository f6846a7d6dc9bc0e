import Foundation
import LayerModels
import LayerServer
import Logging
import Synchronization

/// `layer-bench voip`: call set-up latency. Pairs of users each keep a WebSocket open; calls are
/// placed open loop at each rate (`--rates`, default 100/s) for `--seconds`: from the start of
/// `POST /calls` to the ring on the callee's socket, and from the start of the answer (sent when
/// the ring arrives) to the caller's socket hearing it was answered. Then the call is hung up.
struct VoIPRunner: Sendable {
    let sync: SyncRunner
    let base: String
    let logger: Logger

    var runner: Runner { sync.runner }
    var options: Options { runner.options }

    func run() async throws {
        let pairs = max(1, min(options.sockets / 2, 100))
        var created: [String] = []
        for index in 0..<(2 * pairs) { created.append(try await sync.session(user: "voip-\(index)")) }
        let sessions = created
        let timings = CallTimings()
        let sockets = try await BenchSocket.open(
            sessions.map { "\(base.replacingOccurrences(of: "http://", with: "ws://"))/websocket?session_token=\($0)" },
            logger: logger
        ) { socket, text in
            guard text.contains("\"signal\""), let (type, call) = Self.callSignal(text) else { return }
            if type == "call.ringing", socket % 2 == 1 { timings.rang(call) }
            if type == "call.answered", socket % 2 == 0 { timings.answered(call) }
        }
        print("voip: \(pairs) caller/callee pairs, \(sockets.count) WebSockets connected")
        try await Task.sleep(for: .seconds(2))
        var rows: [String] = []
        for rate in options.rates {
            timings.reset()
            var cpu = CPUTime()
            let total = Int(Double(rate) * options.seconds)
            let interval = Duration.seconds(1) / rate
            let start = ContinuousClock.now
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    let due = start + interval * index
                    if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                    group.addTask { await place(index: index, pairs: pairs, sessions: sessions, timings: timings) }
                }
            }
            let split = cpu.lap()
            rows.append(timings.row(rate: rate, calls: total, cpu: split))
        }
        print(
            "\nrate/s | calls | failed | ring p50 ms | ring p99 ms | answer→caller p50 ms | answer→caller p99 ms | CPU µs/call: process / PostgreSQL"
        )
        for row in rows { print(row) }
        await BenchSocket.close(sockets)
    }

    /// One call: placed, answered once it rings, hung up once the caller hears the answer.
    func place(index: Int, pairs: Int, sessions: [String], timings: CallTimings) async {
        let pair = index % pairs
        let (caller, callee) = (sessions[2 * pair], sessions[2 * pair + 1])
        do {
            let started = ContinuousClock.now
            let placed = try await runner.call(
                .POST, "/calls",
                json: ["callee": .string("voip-\(2 * pair + 1)"), "caller_token": .string("bench-\(index)"), "candidates": []],
                session: caller)
            guard placed.status == 201, let id = placed.json?["id"]?.stringValue else {
                throw BenchError("placing: \(placed.status)")
            }
            let path = "/calls/" + String(id.split(separator: "/").last ?? "")
            guard try await timings.waitForRing(id, placedAt: started) else { throw BenchError("no ring") }
            let answering = ContinuousClock.now
            let answered = try await runner.call(
                .POST, path + "/answer", json: ["device_id": "bench", "callee_token": .string("answer-\(index)")], session: callee
            )
            guard answered.status == 200 else { throw BenchError("answering: \(answered.status)") }
            guard try await timings.waitForAnswer(id, answeredAt: answering) else { throw BenchError("caller not told") }
            _ = try await runner.call(.POST, path + "/hangup", session: caller)
        } catch {
            timings.failed()
        }
    }

    /// The signal type and call id of a `signal` packet about a call.
    static func callSignal(_ text: String) -> (String, String)? {
        guard let data = text.data(using: .utf8), let packet = try? JSONDecoder().decode(JSONValue.self, from: data),
            let type = packet["body"]?["type"]?.stringValue, let id = packet["body"]?["call"]?["id"]?.stringValue
        else { return nil }
        return (type, id)
    }
}

/// When each call rang and was heard answered, and the latencies measured from them.
final class CallTimings: Sendable {
    private struct State {
        var rang: [String: ContinuousClock.Instant] = [:]
        var answered: [String: ContinuousClock.Instant] = [:]
        var ringMs: [Double] = []
        var answerMs: [Double] = []
        var failures = 0
    }
    private let state = Mutex(State())

    func reset() { state.withLock { $0 = State() } }
    func rang(_ call: String) { state.withLock { $0.rang[call] = $0.rang[call] ?? .now } }
    func answered(_ call: String) { state.withLock { $0.answered[call] = $0.answered[call] ?? .now } }
    func failed() { state.withLock { $0.failures += 1 } }

    func waitForRing(_ call: String, placedAt: ContinuousClock.Instant) async throws -> Bool {
        try await wait { state in
            guard let at = state.rang[call] else { return false }
            state.ringMs.append(Self.ms(at - placedAt))
            return true
        }
    }

    func waitForAnswer(_ call: String, answeredAt: ContinuousClock.Instant) async throws -> Bool {
        try await wait { state in
            guard let at = state.answered[call] else { return false }
            state.answerMs.append(Self.ms(at - answeredAt))
            return true
        }
    }

    private func wait(_ check: (inout State) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if state.withLock({ check(&$0) }) { return true }
            try await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    func row(rate: Int, calls: Int, cpu: CPUTime.Split) -> String {
        state.withLock { state in
            func percentile(_ values: [Double], _ p: Double) -> Double {
                guard !values.isEmpty else { return .nan }
                let sorted = values.sorted()
                return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
            }
            return String(
                format: "%d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.0f / %.0f", rate, calls, state.failures,
                percentile(state.ringMs, 0.5), percentile(state.ringMs, 0.99), percentile(state.answerMs, 0.5),
                percentile(state.answerMs, 0.99), cpu.process / Double(calls) * 1e6, cpu.postgres / Double(calls) * 1e6)
        }
    }

    static func ms(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
