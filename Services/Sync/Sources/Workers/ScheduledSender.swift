import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO
import ServiceLifecycle

/// Carries out delayed sends (``ScheduledMessageRepository``) on every replica: it takes every
/// step that is due, then sleeps until the next one is, or until a send is scheduled through this
/// replica (which rings its alarm). A send scheduled through another replica is that replica's to
/// carry out; `longestSleep` bounds how late the others notice it when that replica is gone.
///
/// During the last seconds before a send, the sender is shown typing to the conversation's other
/// participants (`started`, said again every 2.5 s); `finished` follows the send, or the drop.
struct ScheduledSender: Service {
    let sends: ScheduledSends
    let push: Push
    let alarm: Alarm
    var longestSleep: Duration = .seconds(30)
    static let shortestSleep: Duration = .milliseconds(50)
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var pause = longestSleep
            do {
                while !Task.isShuttingDownGracefully {
                    let step = try await sends.step(logger: logger)
                    if case .idle = step { break }
                    await carryOut(step)
                }
                if let seconds = try await sends.secondsUntilNextStep(logger: logger) {
                    // What is overdue now is another replica's, which is taking its step.
                    pause = min(pause, max(Self.shortestSleep, .milliseconds(Int64((seconds * 1000).rounded(.up)))))
                }
            } catch {
                logger.warning("Could not carry out delayed sends", metadata: ["error": "\(String(reflecting: error))"])
            }
            let sleep = pause
            await cancelWhenGracefulShutdown { await alarm.wait(upTo: sleep) }
        }
    }

    /// What follows a step outside its transaction: typing indicators.
    private func carryOut(_ step: ScheduledMessageRepository.Step) async {
        switch step {
        case .idle:
            return
        case .typing(let record):
            await typing(record, "started", senderMustBeIn: true)
        case .sent(let record, _):
            logger.debug("Sent a delayed message", metadata: ["message": "\(record.id)"])
            if record.typingStarted { await typing(record, "finished", senderMustBeIn: false) }
        case .dropped(let record, let reason):
            logger.info("Dropped a delayed message", metadata: ["message": "\(record.id)", "reason": "\(reason)"])
            if record.typingStarted { await typing(record, "finished", senderMustBeIn: false) }
        case .alreadySent(let record):
            logger.debug("A delayed message was sent already", metadata: ["message": "\(record.id)"])
        case .failed(let record, let error):
            logger.warning(
                "Could not send a delayed message; trying again later",
                metadata: ["message": "\(record.id)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Pushes the sender's typing indicator to the conversation's other participants, as a
    /// typist's own `signal` would be (reference 5.5); for a system sender, `user_id` is null and
    /// `sender` names it. Best effort, as typing indicators are.
    private func typing(_ record: ScheduledMessageRecord, _ action: String, senderMustBeIn: Bool) async {
        do {
            guard
                let audience = try await sends.typingAudience(
                    of: record, senderMustBeIn: senderMustBeIn, logger: logger), !audience.isEmpty
            else { return }
            // Rendered once for every recipient, each of whose devices fills in its own base.
            let urls = push.template.urls
            let sender = try await sends.sender(of: record, logger: logger)
            let body = JSONValue.object([
                "type": "typing_indicator",
                "object": .object([
                    "type": "Conversation", "id": .string(LayerID(.conversations, record.conversationID).uri),
                    "url": .string(urls.conversation(record.conversationID)),
                ]),
                "data": .object([
                    "action": .string(action), "user_id": record.senderID.map(JSONValue.string) ?? .null, "sender": sender,
                ]),
            ])
            let packet = EphemeralPacket(type: "signal", body: Packets.json(body), event: "typing_indicator")
            _ = try await PushChannel.publish(packet, app: record.appID, users: audience, postgres: push.postgres, logger: logger)
        } catch {
            logger.warning(
                "Could not push the typing indicator of a delayed message",
                metadata: ["message": "\(record.id)", "error": "\(String(reflecting: error))"])
        }
    }
}
