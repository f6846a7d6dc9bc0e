import Foundation
import LayerModels
import LayerServer
import Logging

/// Signals other services of the suite send to users' devices (call signalling, through
/// `POST /internal/v1/signals`), and who has devices connected.
extension Push {
    /// Sends `signal` (JSON text) to every connected device of `users`, on any replica, kept
    /// `replay.seconds` for devices that connect meanwhile (before it is sent: a device connecting
    /// in between gets it twice rather than never). Answers how many devices each user has
    /// connected; 422 when the signal and its users are too large to send.
    func signal(
        _ signal: String, app: UUID, users: [String], replay: (key: String, seconds: Int)?, logger: Logger
    ) async throws -> [String: Int] {
        if let replay {
            try await repositories.devices.keepSignal(
                app: app, users: users, key: replay.key, signal: signal, seconds: replay.seconds, logger: logger)
        }
        let perUser = try await liveDevices(app: app, users: users, logger: logger)
        let packet = EphemeralPacket(type: "signal", body: signal, event: "signal")
        guard try await PushChannel.publish(packet, app: app, users: users, postgres: postgres, logger: logger) else {
            throw APIError.invalid("signal", "The signal and its users must fit in \(PushChannel.maxPayload) bytes.")
        }
        return perUser
    }

    /// How many devices each of `users` has connected on any replica.
    func liveDevices(app: UUID, users: [String], logger: Logger) async throws -> [String: Int] {
        try await repositories.devices.liveDevices(app: app, users: users, logger: logger)
    }
}

/// What the WebSocket's requests read of the changelog and the conversations.
extension Push {
    /// The seq of the first change of `user`'s changelog logged after `timestamp`.
    func firstSeq(app: UUID, user: String, after timestamp: String, logger: Logger) async throws -> Int64? {
        try await repositories.read(logger: logger) { connection in
            try await repositories.changelog.firstSeq(app: app, user: user, after: timestamp, connection, logger)
        }
    }

    /// `user` as a typing indicator shows them to the other participants of `conversation`; 404
    /// unless they are a current participant.
    func typist(_ user: String, in conversation: UUID, app: UUID, urls: URLBuilder, logger: Logger) async throws -> JSONValue {
        try await repositories.read(logger: logger) { connection in
            let members = try await repositories.devices.currentParticipants(
                app: app, conversation: conversation, connection, logger)
            guard members.contains(user) else { throw APIError.notFound("The conversation") }
            var presenter = Presenter(
                app: app, viewer: user, urls: urls, links: links, reads: PresenterReads(connection), logger: logger)
            try await presenter.loadIdentities([user])
            return try jsonValue(presenter.basicIdentity(user))
        }
    }
}
