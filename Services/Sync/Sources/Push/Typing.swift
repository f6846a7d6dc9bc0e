import Foundation
import LayerModels
import Synchronization

/// Typing indicators (reference 5.5). A typist's client repeats `started` or `paused` every few
/// seconds; when it falls silent the server moves it on by itself, `started` to `paused` to
/// `finished`, one step per `timeout`, so nobody is left "typing" forever by a client that died.
final class TypingTracker: Sendable {
    static let actions: Set<String> = ["started", "paused", "finished"]

    struct Key: Hashable, Sendable {
        let app: UUID
        let conversation: UUID
        let user: String
    }

    /// What the tracker needs to speak for a silent typist. Who receives what it says is decided
    /// when it says it (``Push/typingAudience(of:logger:)``): whoever left the conversation
    /// meanwhile no longer hears of it.
    struct Typist: Sendable {
        var action: String
        var since: ContinuousClock.Instant
        /// The indicator's `object` and the sender's identity, already JSON.
        var object: JSONValue
        var sender: JSONValue
    }

    let timeout: Duration
    private let typists = Mutex<[Key: Typist]>([:])

    init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Records what a typist said; the packet to relay.
    func record(_ key: Key, _ typist: Typist) -> EphemeralPacket {
        typists.withLock { typists in
            if typist.action == "finished" { typists[key] = nil } else { typists[key] = typist }
        }
        return Self.packet(key, typist)
    }

    /// Moves on every typist silent for `timeout`; the packets to relay, with whose they are.
    func advance(now: ContinuousClock.Instant) -> [(key: Key, packet: EphemeralPacket)] {
        typists.withLock { typists in
            var relayed: [(key: Key, packet: EphemeralPacket)] = []
            for (key, var typist) in typists where now - typist.since >= timeout {
                typist.action = typist.action == "started" ? "paused" : "finished"
                typist.since = now
                typists[key] = typist.action == "finished" ? nil : typist
                relayed.append((key, Self.packet(key, typist)))
            }
            return relayed
        }
    }

    static func packet(_ key: Key, _ typist: Typist) -> EphemeralPacket {
        let body = JSONValue.object([
            "type": .string("typing_indicator"),
            "object": typist.object,
            "data": .object([
                "action": .string(typist.action), "user_id": .string(key.user), "sender": typist.sender,
            ]),
        ])
        return EphemeralPacket(type: "signal", body: Packets.json(body), event: "typing_indicator")
    }
}
