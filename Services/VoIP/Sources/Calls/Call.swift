import Foundation
import LayerModels
import LayerServer

/// A network address a device may be reached at (RFC 8445): its own (`host`), as a STUN server
/// sees it (`srflx`), or a TURN relay's (`relay`).
struct Candidate: Sendable, Codable, Equatable {
    var type: String
    var ip: String
    var port: Int
    var transport: String
}

/// A call as stored.
struct Call: Sendable {
    var app: UUID
    var id: UUID
    var caller: String
    var callee: String
    var media: String
    var state: CallState
    var callerToken: String
    var callerCandidates: [Candidate]
    var calleeToken: String?
    var calleeCandidates: [Candidate]?
    var answeredDevice: String?
    var createdAt: Date
    var ringDeadline: Date
    var answeredAt: Date?
    var endedAt: Date?
    var endedBy: String?

    /// Which side `user` is on; nil when they are not a party.
    func side(of user: String) -> CallSide? {
        if user == caller { return .caller }
        if user == callee { return .callee }
        return nil
    }

    /// Seconds from the answer to the end (to the millisecond), for a call that was answered and ended.
    var durationSeconds: Double? {
        guard let answeredAt, let endedAt else { return nil }
        return (max(0, endedAt.timeIntervalSince(answeredAt)) * 1000).rounded() / 1000
    }

    /// The call as its parties see it (nobody else ever does).
    var json: JSONValue {
        func time(_ date: Date?) -> JSONValue { date.map { .string(LayerTimestamp.string($0)) } ?? .null }
        func candidates(_ list: [Candidate]?) -> JSONValue {
            guard let list else { return .null }
            return .array(
                list.map {
                    [
                        "type": .string($0.type), "ip": .string($0.ip), "port": .number(Double($0.port)),
                        "transport": .string($0.transport),
                    ]
                })
        }
        return [
            "id": .string(LayerID(.calls, id).uri),
            "state": .string(state.rawValue),
            "caller": .string(LayerID.identity(userID: caller)),
            "callee": .string(LayerID.identity(userID: callee)),
            "media": .string(media),
            "created_at": time(createdAt),
            "ring_deadline": time(ringDeadline),
            "answered_at": time(answeredAt),
            "ended_at": time(endedAt),
            "ended_by": endedBy.map { .string($0) } ?? .null,
            "duration_seconds": durationSeconds.map { .number($0) } ?? .null,
            "caller_token": .string(callerToken),
            "caller_candidates": candidates(callerCandidates),
            "callee_token": calleeToken.map { .string($0) } ?? .null,
            "callee_candidates": candidates(calleeCandidates),
            "answered_device_id": answeredDevice.map { .string($0) } ?? .null,
        ]
    }
}
