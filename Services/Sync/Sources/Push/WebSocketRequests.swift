import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import NIOCore
import PostgresNIO

/// The packets a client sends on its WebSocket: `request`s (reference 5.3), answered with a
/// `response` when they carry a `request_id`, and typing `signal`s (5.5). Each is let in as an
/// HTTP request would be, by the session's introspection (with the same cache): a session that
/// ended closes the socket instead, and so does one that cannot be checked. A bad packet gets an
/// error response and the connection stays open.
struct WebSocketRequests: Sendable {
    let push: Push
    let domain: SyncDomain
    let device: PushDevice
    let session: AuthenticatedSession
    /// The upgrade request: its host makes the URLs, its session is the caller.
    let request: Request
    let context: LayerRequestContext

    private static let requestIDCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
    private static let maxReplay = 1000

    /// Handles one text packet; false when the connection must end (its session ended, or its
    /// answers are not read).
    func handle(_ text: String) async -> Bool {
        guard await sessionLives() else { return false }
        guard case .object(let packet)? = JSONValue(jsonText: text), case .string(let type)? = packet["type"],
            case .object(let body)? = packet["body"]
        else {
            return fail(nil, nil, APIError(.invalidRequest, "A packet is a JSON object with a type and an object body."))
        }
        var requestID: String?
        if let given = body["request_id"] {
            guard case .string(let id) = given, !id.isEmpty, id.count <= 128, id.allSatisfy(Self.requestIDCharacters.contains)
            else {
                return fail(nil, nil, APIError.invalid("request_id", "request_id has letters, digits, '.' and '-' only."))
            }
            requestID = id
        }
        let method = body["method"]?.stringValue
        do {
            switch type {
            case "request":
                guard let method else { throw APIError(.missingProperty, "A request names its method.", property: "method") }
                let data = try await perform(
                    method, objectID: body["object_id"]?.stringValue, data: body["data"], requestID: requestID)
                guard let requestID else { return true }
                if method == "Counter.read" { return device.reply(.counter(requestID: requestID)) }
                return device.reply(.response(Packets.response(requestID: requestID, method: method, success: true, data: data)))
            case "signal":
                try await signal(body)
                return true
            default:
                throw APIError.invalid("type", "Clients send request and signal packets.")
            }
        } catch {
            let apiError = ErrorMiddleware(routes: RouteTable()).apiError(for: error, request: request, context: context)
            return fail(requestID, method, apiError)
        }
    }

    /// Whether the socket's session may still act; if not, the device is closed with why.
    private func sessionLives() async -> Bool {
        do {
            let answer = try await push.introspector.introspect(token: device.sessionToken, logger: context.logger)
            guard answer.active else {
                device.close(PushCloseReason(inactive: answer.reason))
                return false
            }
            return true
        } catch {
            context.logger.warning("Could not check a WebSocket's session", metadata: ["error": "\(error)"])
            device.close(.sessionUnchecked)
            return false
        }
    }

    /// Answers a request with an error; false when the answer cannot be queued.
    func fail(_ requestID: String?, _ method: String?, _ error: APIError) -> Bool {
        device.reply(.response(Packets.response(requestID: requestID, method: method, success: false, data: error.body)))
    }

    /// What a request answers, encoded once when its response is written.
    private func perform(
        _ method: String, objectID: String?, data: JSONValue?, requestID: String?
    ) async throws -> (any Encodable & Sendable)? {
        let scope = Scope(
            app: session.appID, caller: .user(session.userID), isBackend: false, urls: device.urls, logger: context.logger)
        switch method {
        case "Counter.read", "Presence.subscribe":
            return nil
        case "Message.create":
            guard let objectID else {
                throw APIError(.missingProperty, "Message.create names the conversation in object_id.", property: "object_id")
            }
            let channel = objectID.hasPrefix("layer:///channels/") ? LayerID(parsing: objectID, as: .channels)?.uuid : nil
            guard let conversation = channel ?? LayerID(parsing: objectID, as: .conversations)?.uuid else {
                throw APIError.invalid("object_id", "object_id is a conversation or channel id.")
            }
            let body = try Request.decodeJSON(MessageInput.self, from: try buffer(data), allowedKeys: MessageInput.clientKeys)
            if let channel { return try await domain.channels.send(body, to: channel, as: .user(scope.user), scope) }
            switch try await domain.messages.send(body, to: conversation, as: .user(scope.user), scope) {
            case .now(let message): return message
            case .later(let scheduled): return scheduled
            }
        case "Conversation.create":
            let body = try Request.decodeJSON(
                Conversations.NewConversationInput.self, from: try buffer(data),
                allowedKeys: Conversations.NewConversationInput.keys)
            return try await domain.conversations.create(body, scope).object
        case "Channel.create":
            let body = try Request.decodeJSON(
                Channels.NewChannelInput.self, from: try buffer(data), allowedKeys: Channels.NewChannelInput.keys)
            return try await domain.channels.create(body, scope)
        case "Event.replay":
            try await replay(data, requestID: requestID)
            return nil
        case "Presence.update":
            guard case .array(let operations)? = data,
                let status = operations.lazy.compactMap({ operation -> String? in
                    guard case .object(let fields) = operation, fields["property"]?.stringValue == "status" else { return nil }
                    return fields["value"]?.stringValue
                }).first
            else {
                throw APIError(.missingProperty, "Presence.update sets status with a Layer-Patch array.", property: "status")
            }
            guard Presence.choices.contains(status) else {
                throw APIError.invalid("status", "status is available, busy, away, invisible or auto.")
            }
            try await push.presence.choose(status, app: scope.app, user: scope.user, logger: context.logger)
            return nil
        case "Presence.sync":
            // Presence is only about those the caller follows (and the caller); an id of anyone
            // else gets no answer, as if they had no presence at all.
            var asked: [String]?
            if case .object(let fields)? = data, case .array(let ids)? = fields["ids"] {
                asked = try ids.enumerated().map { try userID(named: $1, property: "ids.\($0)") }
            }
            var users = try await domain.following.followed(among: asked, scope)
            if asked?.contains(scope.user) ?? true { users.insert(scope.user) }
            let changes = try await push.presence.changes(
                app: scope.app, users: users.sorted(), viewer: scope.user, urls: device.urls, logger: context.logger)
            return JSONValue.object(["changes": .array(changes)])
        default:
            throw APIError(.invalidEndpoint, "There is no WebSocket method \(method).", property: "method")
        }
    }

    private func buffer(_ data: JSONValue?) throws -> ByteBuffer {
        guard let data, case .object = data else {
            throw APIError(.missingProperty, "This request takes its properties in data.", property: "data")
        }
        return try ByteBuffer.json(data)
    }

    /// `Event.replay {"from_timestamp"}`: every change this device was given that was logged
    /// after that time, again, before the response.
    private func replay(_ data: JSONValue?, requestID: String?) async throws {
        guard case .object(let fields)? = data, case .string(let from)? = fields["from_timestamp"] else {
            throw APIError(.missingProperty, "Event.replay needs from_timestamp.", property: "from_timestamp")
        }
        guard LayerTimestamp.date(from) != nil else {
            throw APIError.invalid("from_timestamp", "from_timestamp is an ISO 8601 time.")
        }
        let key = device.key
        let upTo = device.seq
        let seq = try await push.firstSeq(app: key.app, user: key.user, after: from, logger: context.logger)
        guard let seq, seq <= upTo else { return }
        guard upTo - seq < Int64(Self.maxReplay) else {
            throw APIError(
                .invalidRequest, "More than \(Self.maxReplay) changes since \(from); catch up with POST /sync instead.",
                property: "from_timestamp")
        }
        var after = seq - 1
        while after < upTo {
            let changes = try await push.rendered(
                app: key.app, user: key.user, after: after, version: device.version, urls: device.urls, logger: context.logger)
            for change in changes where change.seq <= upTo {
                for packet in change.packets(in: device.version) {
                    guard device.reply(.ephemeral(EphemeralPacket(type: packet.type, body: packet.body, event: change.type)))
                    else { throw APIError(.requestTimeout, "The replay is not being read.") }
                }
            }
            guard let last = changes.last?.seq else { break }
            after = last
        }
    }

    /// A typing indicator from the client, relayed to the conversation's other participants.
    private func signal(_ body: [String: JSONValue]) async throws {
        guard body["type"]?.stringValue == "typing_indicator" else {
            throw APIError.invalid("type", "The only signal a client sends is typing_indicator.")
        }
        guard case .object(let object)? = body["object"], let id = object["id"]?.stringValue,
            let conversation = LayerID(parsing: id, as: .conversations)?.uuid
        else {
            throw APIError.invalid("object", "A typing indicator names its conversation in object.id.")
        }
        guard case .object(let data)? = body["data"], let action = data["action"]?.stringValue,
            TypingTracker.actions.contains(action)
        else {
            throw APIError.invalid("action", "action is started, paused or finished.")
        }
        let (user, app) = (session.userID, session.appID)
        // Rendered once for every recipient, each of whose devices fills in its own base.
        let urls = push.template.urls
        let key = TypingTracker.Key(app: app, conversation: conversation, user: user)
        let sender = try await push.typist(user, in: conversation, app: app, urls: urls, logger: context.logger)
        let recipients = try await push.typingAudience(of: key, logger: context.logger)
        let objectJSON = JSONValue.object([
            "type": .string("Conversation"), "id": .string(LayerID(.conversations, conversation).uri),
            "url": .string(urls.conversation(conversation)),
        ])
        let packet = push.typing.record(
            key, TypingTracker.Typist(action: action, since: .now, object: objectJSON, sender: sender))
        guard !recipients.isEmpty else { return }
        _ = try await PushChannel.publish(packet, app: app, users: recipients, postgres: push.postgres, logger: context.logger)
    }
}
