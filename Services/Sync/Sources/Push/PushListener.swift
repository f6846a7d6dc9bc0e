import Foundation
import LayerModels
import Logging
import PostgresNIO
import ServiceLifecycle

/// The one channel every replica listens on. Its notifications are JSON:
/// `{"a":app,"c":[[user,seq],…]}` when changelogs grew (sent by `sync.append_change` on commit),
/// `{"a":app,"u":[user,…],"t":packet type,"e":SSE event,"b":"<packet body>"}` (and `"l"`, its body
/// for 1.x devices, if it differs) for an ephemeral packet to those users' devices, wherever they
/// are connected, and
/// `{"a":app,"x":user,"r":reason,"s":[session,…]}` when sessions of that user ended (`s` absent:
/// all of them), and `{"a":app,"p":1}` when the app's push providers changed.
enum PushChannel {
    static let name = "sync_push"
    /// PostgreSQL refuses payloads of 8000 bytes or more.
    static let maxPayload = 7900

    struct Signal: Codable {
        var a: UUID
        var u: [String]
        var t: String
        var e: String
        var b: String
        var l: String?
    }

    /// Sends an ephemeral packet to every replica (this one included); false if it is too large.
    static func publish(
        _ packet: EphemeralPacket, app: UUID, users: [String], postgres: PostgresClient, logger: Logger
    ) async throws -> Bool {
        let signal = Signal(a: app, u: users, t: packet.type, e: packet.event, b: packet.body, l: packet.legacyBody)
        let payload = String(decoding: try JSONEncoder().encode(signal), as: UTF8.self)
        guard payload.utf8.count <= maxPayload else { return false }
        try await postgres.notify(name, payload: payload, logger: logger)
        return true
    }

    struct Ended: Codable {
        var a: UUID
        var x: String
        var r: String
        var s: [String]?
    }

    /// Tells every replica (this one included) that sessions ended, in as many notifications as
    /// the sessions named take. A notice that would not fit even so (a user id of a few thousand
    /// escaped characters) names the user alone, which ends more connections than needed rather
    /// than fewer.
    static func publish(_ ended: InternalAPI.SessionsEnded, postgres: PostgresClient, logger: Logger) async throws {
        let batches: [[String]?] =
            ended.sessions.map { sessions in
                stride(from: 0, to: max(sessions.count, 1), by: 50).map { Array(sessions[$0..<min($0 + 50, sessions.count)]) }
            } ?? [nil]
        for batch in batches {
            var payload = try text(Ended(a: ended.appID, x: ended.userID, r: ended.reason, s: batch))
            if payload.utf8.count > maxPayload {
                payload = try text(Ended(a: ended.appID, x: ended.userID, r: ended.reason, s: nil))
            }
            try await postgres.notify(name, payload: payload, logger: logger)
        }
    }

    /// Tells every replica that the app's push providers changed.
    static func publishProvidersChanged(app: UUID, postgres: PostgresClient, logger: Logger) async throws {
        try await postgres.notify(name, payload: "{\"a\":\"\(app.uuidString)\",\"p\":1}", logger: logger)
    }

    private static func text(_ notice: Ended) throws -> String {
        String(decoding: try JSONEncoder().encode(notice), as: UTF8.self)
    }
}

/// Listens for the push channel on a connection of its own and hands what arrives to the hub
/// (or, for sessions that ended, to ``Push/sessionsEnded(app:user:sessions:reason:)``).
/// When the connection drops it listens again and marks every connected user as waiting, since
/// notifications sent meanwhile are lost (the changelog is not).
struct PushListener: Service {
    let push: Push
    let logger: Logger

    private var hub: PushHub { push.hub }
    private var postgres: PostgresClient { push.postgres }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await postgres.withConnection { connection in
                        try await connection.listen(on: PushChannel.name) { notifications in
                            hub.markWaiting(hub.connectedUsers)
                            for try await notification in notifications { handle(notification.payload) }
                        }
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning("Push listener lost PostgreSQL; listening again", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    func handle(_ payload: String) {
        guard case .object(let fields)? = JSONValue(jsonText: payload),
            let app = fields["a"]?.stringValue.flatMap(UUID.init(uuidString:))
        else { return }
        if fields["p"] != nil {
            push.jobAlarm.providersChanged()
            return
        }
        if fields["w"] != nil {
            push.webhookEvents.ring()
            return
        }
        if fields["j"] != nil {
            push.jobAlarm.jobsRecorded()
            return
        }
        if case .array(let changed)? = fields["c"] {
            hub.markWaiting(
                changed.compactMap { pair in
                    guard case .array(let fields) = pair, case .string(let user)? = fields.first else { return nil }
                    return UserKey(app: app, user: user)
                })
        } else if fields["x"] != nil, let ended = try? JSONDecoder().decode(PushChannel.Ended.self, from: Data(payload.utf8)) {
            push.sessionsEnded(app: app, user: ended.x, sessions: ended.s, reason: ended.r)
        } else if let signal = try? JSONDecoder().decode(PushChannel.Signal.self, from: Data(payload.utf8)) {
            hub.deliver(
                EphemeralPacket(type: signal.t, body: signal.b, event: signal.e, legacyBody: signal.l),
                to: signal.u.map { UserKey(app: app, user: $0) })
        }
    }
}
