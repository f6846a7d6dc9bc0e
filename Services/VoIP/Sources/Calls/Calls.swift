import Foundation
import LayerModels
import LayerServer
import Logging

/// What the call routes do: place a call and ring it, move it on a party's action, read it.
struct Calls: Sendable {
    let repository: CallRepository
    let signals: CallSignals
    let knownUsers: KnownUsers
    let blocks: CallBlocks
    let relationships: RelationshipReporter
    let ringSeconds: Int
    /// Wakes the sweeper (``CallSweeper``): a call rings, or moved, through this replica.
    let sweeps = Alarm()

    /// `POST /calls`: stores the call ringing and rings every device of the callee, unless either
    /// of the two blocked the other.
    func place(_ placement: CallInput.Placement, by caller: String, app: UUID, logger: Logger) async throws -> Call {
        guard placement.callee != caller else { throw APIError.invalid("callee", "A user cannot call themselves.") }
        guard try await knownUsers.isKnown(placement.callee, app: app, logger: logger) else {
            throw APIError.invalid("callee", "No user \(placement.callee) in this app.")
        }
        try await blocks.requireNone(between: caller, and: placement.callee, app: app, logger: logger)
        let call = try await repository.insert(placement, app: app, caller: caller, ringSeconds: ringSeconds, logger: logger)
        sweeps.ring()
        do {
            // The ring's answer counts the caller's devices too: whether they were online when calling.
            let devices = try await signals.ring(call, logger: logger)
            try? await repository.markSignalled(
                app: app, id: call.id, state: .ringing, callerOnline: (devices[caller] ?? 0) > 0, logger: logger)
        } catch {
            // Nobody could be rung: the call ends at once rather than ring unheard.
            _ = try? await repository.move(
                app: app, id: call.id, from: .ringing, to: .cancelled, endedBy: "service", logger: logger)
            throw error
        }
        relationships.report(app: app, from: caller, to: [placement.callee], kind: .call)
        return call
    }

    /// A call `user` takes part in; 404 for anyone else.
    func call(_ id: UUID, app: UUID, user: String, logger: Logger) async throws -> (call: Call, side: CallSide) {
        guard let call = try await repository.call(app: app, id: id, logger: logger), let side = call.side(of: user) else {
            throw APIError.notFound("call")
        }
        return (call, side)
    }

    /// A party's action on a call: 403 when it is the other side's, 409 when the call's state does
    /// not allow it (or another action came first), and nothing changes then.
    func act(
        _ action: CallAction, on id: UUID, app: UUID, user: String, answer: CallInput.Answer? = nil, logger: Logger
    ) async throws -> Call {
        let (call, side) = try await call(id, app: app, user: user, logger: logger)
        guard action.isAllowed(for: side) else {
            throw APIError(.accessDenied, "Only the \(side == .caller ? "callee" : "caller") may \(action.rawValue) this call.")
        }
        guard let target = action.target(from: call.state),
            let moved = try await repository.move(
                app: app, id: id, from: call.state, to: target, endedBy: target.isFinal ? action.endedBy(side) : nil,
                answer: answer, logger: logger)
        else {
            let now = try await repository.call(app: app, id: id, logger: logger)?.state ?? call.state
            throw APIError(.conflict, "The call is \(now.rawValue): it cannot be \(action.pastTense) now.")
        }
        sweeps.ring()
        await notify(moved, logger: logger)
        return moved
    }

    /// Tells the parties' devices; the move is committed whatever happens to the signal, and one
    /// that did not go out is sent again by the sweeper (``CallSweeper``).
    func notify(_ call: Call, logger: Logger) async {
        do {
            try await signals.changed(call, logger: logger)
            try await repository.markSignalled(app: call.app, id: call.id, state: call.state, logger: logger)
        } catch {
            logger.warning(
                "Could not signal a call's change", metadata: ["call": "\(call.id)", "state": "\(call.state.rawValue)"])
        }
    }
}

extension CallAction {
    var pastTense: String {
        switch self {
        case .answer: "answered"
        case .reject: "rejected"
        case .cancel: "cancelled"
        case .hangup: "hung up"
        case .ringTimeout: "missed"
        case .callerGone: "cancelled"
        }
    }
}
