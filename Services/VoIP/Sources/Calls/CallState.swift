/// The states of a call and every move between them, in one place.
///
/// ```
/// ringing ──answer──▶ answered ──hangup──▶ ended
///    │ reject ─▶ rejected
///    │ cancel, caller gone ─▶ cancelled
///    └ ring timeout ─▶ missed
/// ```
/// Any other move is a conflict and changes nothing.
enum CallState: String, Sendable, Codable, CaseIterable {
    case ringing, answered, rejected, cancelled, missed, ended

    /// Whether the call is over.
    var isFinal: Bool { self != .ringing && self != .answered }
}

/// The two parties of a call.
enum CallSide: String, Sendable {
    case caller, callee
}

/// What moves a call: one of its parties, or the service (a timeout).
enum CallAction: String, Sendable, CaseIterable {
    case answer, reject, cancel, hangup
    /// The callee did not answer in time.
    case ringTimeout
    /// Every device of the caller has been gone for the grace period.
    case callerGone

    /// Who may take the action: a party (nil: only the service, on its own).
    func isAllowed(for side: CallSide) -> Bool {
        switch self {
        case .answer, .reject: side == .callee
        case .cancel: side == .caller
        case .hangup: true
        case .ringTimeout, .callerGone: false
        }
    }

    /// Where the action takes a call in `state`; nil when it cannot (a conflict).
    func target(from state: CallState) -> CallState? {
        switch (self, state) {
        case (.answer, .ringing): .answered
        case (.reject, .ringing): .rejected
        case (.cancel, .ringing), (.callerGone, .ringing): .cancelled
        case (.ringTimeout, .ringing): .missed
        case (.hangup, .answered): .ended
        default: nil
        }
    }

    /// What `ended_by` records: the side that acted, or the service.
    func endedBy(_ side: CallSide?) -> String {
        switch self {
        case .ringTimeout: "timeout"
        case .callerGone: "caller_gone"
        default: side?.rawValue ?? "service"
        }
    }
}
