import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// Everything push: the devices connected here, the services that feed them, and how a device
/// comes and goes. WebSockets and event streams differ only in how they write what is queued.
struct Push: Sendable {
    let settings: PushSettings
    let hub = PushHub()
    let repositories: SyncRepositories
    let postgres: PostgresClient
    let links: ContentLinks
    /// What pushed data is rendered with: each device's writer fills in the device's own base.
    let template: PushURLTemplate
    let introspector: any SessionIntrospector
    let presence: Presence
    let typing: TypingTracker
    /// Rung when a push job was recorded (on any replica), for the push-notification sender.
    let jobAlarm: PushJobAlarm
    /// Rung when a webhook event was recorded (on any replica), for the webhook deliverer.
    let webhookEvents: Alarm

    init(
        settings: PushSettings, repositories: SyncRepositories, postgres: PostgresClient, links: ContentLinks,
        template: PushURLTemplate, introspector: any SessionIntrospector, jobAlarm: PushJobAlarm = PushJobAlarm(),
        webhookEvents: Alarm = Alarm()
    ) {
        self.settings = settings
        self.jobAlarm = jobAlarm
        self.webhookEvents = webhookEvents
        self.repositories = repositories
        self.postgres = postgres
        self.links = links
        self.template = template
        self.introspector = introspector
        presence = Presence(repositories: repositories, postgres: postgres, urls: template.urls)
        typing = TypingTracker(timeout: settings.typingTimeout)
    }

    func services(logger: Logger) -> [any Service] {
        [
            PushListener(push: self, logger: logger),
            PushFanout(push: self, logger: logger),
            PushMaintenance(push: self, logger: logger),
        ]
    }

    /// Where a new device starts: after `anchor` (validated against the user's changelog), or
    /// after the user's latest change.
    func startSeq(app: UUID, user: String, anchor: Int64?, property: String, logger: Logger) async throws -> Int64 {
        let last = try await repositories.read(logger: logger) { connection in
            try await repositories.changelog.lastSeq(app: app, user: user, connection, logger)
        }
        guard let anchor else { return last }
        guard (0...last).contains(anchor) else {
            throw APIError.invalid(property, "\(property) \(anchor) is not in this user's changelog (at \(last)).")
        }
        return anchor
    }

    /// Registers a device here and in `sync.devices`; the fan-out starts offering it changes.
    func open(
        _ kind: PushDevice.Kind, session: AuthenticatedSession, token: String, urls: URLBuilder,
        version: APIVersion = .v3_0, after seq: Int64, logger: Logger
    ) async throws -> PushDevice {
        let device = PushDevice(
            id: hub.nextDeviceID(), key: UserKey(app: session.appID, user: session.userID), kind: kind,
            sessionToken: token, expiresAt: session.expiresAt, urls: urls, version: version, after: seq,
            capacity: settings.buffer)
        hub.add(device)
        do {
            let webSockets = try await repositories.devices.addDevice(device, replica: hub.replicaID, logger: logger)
            if kind == .webSocket, webSockets == 1 {
                try await presence.connected(app: session.appID, user: session.userID, logger: logger)
            }
            // Signals kept for devices that connect later (a call still ringing).
            for signal in try await repositories.devices.keptSignals(app: session.appID, user: session.userID, logger: logger) {
                device.offer(EphemeralPacket(type: "signal", body: signal, event: "signal"))
            }
        } catch {
            await close(device, logger: logger)
            throw error
        }
        return device
    }

    /// Unregisters a device that has gone; the user goes offline with their last WebSocket.
    func close(_ device: PushDevice, logger: Logger) async {
        if device.closeReason == nil { device.close(.shuttingDown) }
        hub.remove(device)
        do {
            let webSockets = try await repositories.devices.removeDevice(device, replica: hub.replicaID, logger: logger)
            if device.kind == .webSocket, webSockets == 0 {
                try await presence.disconnected(app: device.key.app, user: device.key.user, logger: logger)
            }
        } catch {
            logger.warning("Could not record a device leaving", metadata: ["error": "\(error)"])
        }
    }

    /// Who hears a typist now: the conversation's other current participants, but those who
    /// blocked the typist.
    func typingAudience(of typist: TypingTracker.Key, logger: Logger) async throws -> [String] {
        try await repositories.read(logger: logger) { connection in
            let others = try await repositories.devices.currentParticipants(
                app: typist.app, conversation: typist.conversation, connection, logger
            ).filter { $0 != typist.user }
            let blocking = try await connection.usersBlocking(typist.user, among: others, app: typist.app, logger: logger)
            return others.filter { !blocking.contains($0) }
        }
    }

    /// Pushed JSON (a change or an ephemeral packet, rendered on ``template``) as `device` must
    /// receive it: with the device's own base in its URLs.
    func filled(_ json: String, for device: PushDevice) -> String {
        template.fill(json, base: device.escapedBase)
    }

    /// Sessions of a user ended, as the auth service told some replica: what was cached about
    /// the user's sessions is dropped, so that their next request is checked afresh, and the
    /// devices connected here with the sessions that ended (`sessions`: their references; nil:
    /// all of them) are closed.
    func sessionsEnded(app: UUID, user: String, sessions: [String]?, reason: String) {
        introspector.forget(app: app, user: user)
        let ended = sessions.map(Set.init)
        let closing = PushCloseReason(inactive: reason)
        for device in hub.devices(of: UserKey(app: app, user: user))
        where ended?.contains(device.sessionReference) ?? true {
            device.close(closing)
        }
    }

    /// Called by a writer after it sent an item: a device that drained after being full gets
    /// what it missed meanwhile.
    func sent(_ device: PushDevice) {
        if device.sent() { hub.markWaiting([device.key]) }
    }
}

/// The timers of push, one loop for all connections: disconnects devices stuck with a full
/// outbox, whose session expired or ended; keeps event streams alive; moves silent typists on;
/// refreshes this replica's row and drops kept signals that ran out.
struct PushMaintenance: Service {
    let push: Push
    let logger: Logger

    func run() async throws {
        let settings = push.settings
        let tick = min(Duration.seconds(1), settings.typingTimeout / 4, settings.stallTimeout / 4)
        var lastSessionCheck = ContinuousClock.now
        var lastKeepAlive = ContinuousClock.now
        var lastRefresh = ContinuousClock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            try? await Task.sleep(for: tick)
            let now = ContinuousClock.now
            for device in push.hub.allDevices {
                if let stuck = device.stuckFor(now: now), stuck >= settings.stallTimeout { device.close(.fellBehind) }
            }
            for relay in push.typing.advance(now: now) {
                guard let audience = try? await push.typingAudience(of: relay.key, logger: logger), !audience.isEmpty
                else { continue }
                _ = try? await PushChannel.publish(
                    relay.packet, app: relay.key.app, users: audience, postgres: push.postgres, logger: logger)
            }
            if now - lastKeepAlive >= settings.keepAlive {
                lastKeepAlive = now
                for device in push.hub.allDevices where device.kind == .events { device.keepAlive() }
            }
            if now - lastSessionCheck >= settings.sessionCheck {
                lastSessionCheck = now
                await checkSessions()
            }
            if now - lastRefresh >= DeviceRepository.replicaLifetime / 3 {
                lastRefresh = now
                do {
                    try await push.repositories.devices.refreshReplica(
                        push.hub.replicaID, devices: push.hub.allDevices, logger: logger)
                    try await push.repositories.devices.dropExpiredSignals(logger: logger)
                } catch {
                    logger.warning("Could not refresh this replica's row", metadata: ["error": "\(error)"])
                }
            }
        }
        try? await push.repositories.devices.removeReplica(push.hub.replicaID, logger: logger)
    }

    /// Closes the devices whose session has expired or is no longer active. Sessions are checked
    /// as HTTP requests are, through the introspection cache: a check costs a round trip to the
    /// auth service once per cache time and session, and a session that ended is seen within
    /// that time (and one check). A session that cannot be checked is not trusted: its devices
    /// are closed too, and connect again once the auth service answers. The auth service's
    /// notices usually close devices first; this bounds the time when one is lost.
    private func checkSessions() async {
        let now = Date()
        var byToken: [String: [PushDevice]] = [:]
        for device in push.hub.allDevices where device.closeReason == nil {
            if let expiry = device.expiresAt, expiry <= now {
                device.close(.sessionEnded)
            } else {
                byToken[device.sessionToken, default: []].append(device)
            }
        }
        guard !byToken.isEmpty else { return }
        // Every session at once: those the cache trusts cost nothing, the rest one call (and one
        // lookup) in all, rather than one each as their cached answers run out together.
        let tokens = Array(byToken.keys)
        do {
            let answers = try await push.introspector.introspect(tokens: tokens, logger: logger)
            for (token, answer) in zip(tokens, answers) where !answer.active {
                let ending = PushCloseReason(inactive: answer.reason)
                for device in byToken[token] ?? [] { device.close(ending) }
            }
        } catch {
            logger.warning("Could not check the push connections' sessions", metadata: ["error": "\(error)"])
            for device in byToken.values.joined() { device.close(.sessionUnchecked) }
        }
    }
}
