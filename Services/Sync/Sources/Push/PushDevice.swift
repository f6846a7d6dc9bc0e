import Crypto
import Foundation
import LayerModels
import LayerServer
import Synchronization

/// Whose changelog a device follows.
struct UserKey: Hashable, Sendable {
    let app: UUID
    let user: String
}

/// One change of a user's changelog, rendered once for all of that user's devices.
final class RenderedChange: Sendable {
    let seq: Int64
    /// When the change was logged, to the microsecond: the envelope `timestamp` of its packets.
    let timestamp: String
    /// The changelog type, the SSE `event` name.
    let type: String
    /// The operation as `POST /sync` returns it: the SSE `data`.
    let operation: String
    /// The WebSocket packets (`change` or `operation`) this change becomes, each `(type, body)`,
    /// in each API version that a device of the user speaks.
    private let packets: [APIVersion: [(type: String, body: String)]]

    init(
        seq: Int64, timestamp: String, type: String, operation: String,
        packets: [APIVersion: [(type: String, body: String)]]
    ) {
        self.seq = seq
        self.timestamp = timestamp
        self.type = type
        self.operation = operation
        self.packets = packets
    }

    /// The packets of a device speaking `version`.
    func packets(in version: APIVersion) -> [(type: String, body: String)] {
        packets[version] ?? packets[.v3_0] ?? []
    }
}

/// Something pushed outside the changelog: a typing indicator, a presence change, a signal from
/// another service. Lost if nobody is connected, by design.
struct EphemeralPacket: Sendable {
    /// The WebSocket packet type (`signal` or `change`) and body.
    let type: String
    let body: String
    /// The SSE event name.
    let event: String
    /// The body for devices that speak 1.x, when it differs (an `update` said `patch`).
    var legacyBody: String?
}

enum PushItem: Sendable {
    case change(RenderedChange)
    case ephemeral(EphemeralPacket)
    /// A WebSocket response body.
    case response(String)
    /// The response to `Counter.read`, which only the writer can fill in.
    case counter(requestID: String)
    /// An SSE comment that keeps proxies from closing an idle stream.
    case keepAlive
}

/// Why the server ends a push connection. The codes of the session's ends are `4000 +` the
/// status its next HTTP request would get.
enum PushCloseReason: Sendable, Equatable {
    /// Logged out, revoked, challenged, expired, or its certificate revoked.
    case sessionEnded
    case userSuspended
    /// The session could not be checked (the auth service did not answer): the connection is not
    /// kept on trust.
    case sessionUnchecked
    case fellBehind
    case shuttingDown

    /// How a session that introspection (or the auth service's notice) calls inactive for
    /// `reason` ends its connections.
    init(inactive reason: String?) {
        self = reason == "suspended" ? .userSuspended : .sessionEnded
    }

    var code: UInt16 {
        switch self {
        case .sessionEnded: 4401
        case .userSuspended: 4403
        case .sessionUnchecked: 4503
        case .fellBehind: 1013
        case .shuttingDown: 1001
        }
    }

    var text: String {
        switch self {
        case .sessionEnded: "session ended"
        case .userSuspended: "user suspended"
        case .sessionUnchecked: "session could not be checked; connect again"
        case .fellBehind: "too far behind; resume from the changelog"
        case .shuttingDown: "server shutting down"
        }
    }
}

/// A connected WebSocket or event stream. Its outbox is bounded: the fan-out stops offering it
/// changes while the outbox is full (nothing is skipped, the changes stay in the changelog) and
/// the sweeper disconnects it if it stays full for too long. Memory per device is therefore
/// bounded whatever the client does.
final class PushDevice: Sendable {
    enum Kind: String, Sendable {
        case webSocket = "websocket"
        case events
    }

    let id: Int64
    let key: UserKey
    let kind: Kind
    /// The session token, kept to check from time to time that the session is still alive.
    let sessionToken: String
    /// How the auth service names the session when it ends: the base64url SHA-256 of its token.
    let sessionReference: String
    let expiresAt: Date?
    /// How URLs in what it is sent begin (from the request that opened it).
    let urls: URLBuilder
    /// The API version its packets are rendered in (a WebSocket's `layer-X.Y` subprotocol).
    let version: APIVersion
    /// ``urls``'s base as written in JSON, which the writer puts into pushed data.
    let escapedBase: String
    private let capacity: Int
    private let outbox: AsyncStream<PushItem>.Continuation
    let items: AsyncStream<PushItem>
    private let state: Mutex<State>

    private struct State {
        /// The last changelog seq put in the outbox.
        var seq: Int64
        var queued = 0
        var fullSince: ContinuousClock.Instant?
        var lastSent: ContinuousClock.Instant?
        var closeReason: PushCloseReason?
        var onClose: (@Sendable (PushCloseReason) -> Void)?
    }

    /// How a session is named outside of auth: the base64url SHA-256 of its token (so are ended
    /// sessions reported, and push tokens tied to the session that registered them).
    static func sessionReference(of token: String) -> String {
        Data(SHA256.hash(data: Data(token.utf8))).base64URLEncodedString()
    }

    init(
        id: Int64, key: UserKey, kind: Kind, sessionToken: String, expiresAt: Date?, urls: URLBuilder,
        version: APIVersion = .v3_0, after seq: Int64, capacity: Int
    ) {
        self.id = id
        self.urls = urls
        self.version = version
        escapedBase = PushURLTemplate.escaped(urls.base)
        self.key = key
        self.kind = kind
        self.sessionToken = sessionToken
        sessionReference = Self.sessionReference(of: sessionToken)
        self.expiresAt = expiresAt
        self.capacity = capacity
        (items, outbox) = AsyncStream.makeStream(of: PushItem.self, bufferingPolicy: .unbounded)
        state = Mutex(State(seq: seq))
    }

    /// The last changelog seq this device was given.
    var seq: Int64 { state.withLock { $0.seq } }

    /// Whether the fan-out should fetch changes for this device now. A full device is noted as
    /// such, so that it asks again once it has drained.
    func wantsChanges() -> Bool {
        state.withLock { state in
            guard state.closeReason == nil else { return false }
            guard state.queued < capacity else {
                if state.fullSince == nil { state.fullSince = .now }
                return false
            }
            return true
        }
    }

    /// How long the device has been stuck: its outbox full and nothing sent meanwhile. A slow
    /// client that keeps reading is never stuck; its backlog waits in the changelog.
    func stuckFor(now: ContinuousClock.Instant) -> Duration? {
        state.withLock { state in
            state.fullSince.map { full in now - max(full, state.lastSent ?? full) }
        }
    }

    /// Queues the change if it is the device's next one; false when the outbox is full, in which
    /// case the fan-out must not offer it later changes until it drains.
    func offer(_ change: RenderedChange) -> Bool {
        state.withLock { state in
            guard state.closeReason == nil else { return false }
            guard change.seq > state.seq else { return true }
            guard state.queued < capacity else {
                if state.fullSince == nil { state.fullSince = .now }
                return false
            }
            state.seq = change.seq
            state.queued += 1
            outbox.yield(.change(change))
            return true
        }
    }

    /// Queues an ephemeral packet, in this device's version; dropped when the outbox is full.
    func offer(_ packet: EphemeralPacket) {
        var packet = packet
        if !version.usesIdentities, let legacy = packet.legacyBody {
            packet = EphemeralPacket(type: packet.type, body: legacy, event: packet.event)
        }
        state.withLock { state in
            guard state.closeReason == nil, state.queued < capacity else { return }
            state.queued += 1
            outbox.yield(.ephemeral(packet))
        }
    }

    /// Queues an answer to the device's own request. Answers may use the outbox's room twice
    /// over; false when even that is used up, by a client that sends but does not read.
    func reply(_ item: PushItem) -> Bool {
        state.withLock { state in
            guard state.closeReason == nil, state.queued < capacity * 2 else { return false }
            state.queued += 1
            outbox.yield(item)
            return true
        }
    }

    /// Queues a keep-alive comment unless the outbox already has something to send.
    func keepAlive() {
        state.withLock { state in
            guard state.closeReason == nil, state.queued == 0 else { return }
            state.queued += 1
            outbox.yield(.keepAlive)
        }
    }

    /// Called by the writer after sending an item. True when the device has room again after
    /// being full, so the fan-out should look for what it missed meanwhile.
    func sent() -> Bool {
        state.withLock { state in
            state.queued -= 1
            state.lastSent = .now
            guard state.fullSince != nil, state.queued <= capacity / 2 else { return false }
            state.fullSince = nil
            return true
        }
    }

    /// Registers what ends the transport; called at once if the device is already closed.
    func onClose(_ action: @escaping @Sendable (PushCloseReason) -> Void) {
        let closed = state.withLock { state -> PushCloseReason? in
            if let reason = state.closeReason { return reason }
            state.onClose = action
            return nil
        }
        if let closed { action(closed) }
    }

    /// Ends the device: its outbox finishes (the writer stops after what is queued is dropped)
    /// and the transport is told why.
    func close(_ reason: PushCloseReason) {
        let action = state.withLock { state -> (@Sendable (PushCloseReason) -> Void)? in
            guard state.closeReason == nil else { return nil }
            state.closeReason = reason
            defer { state.onClose = nil }
            return state.onClose
        }
        outbox.finish()
        action?(reason)
    }

    var closeReason: PushCloseReason? { state.withLock { $0.closeReason } }
}
