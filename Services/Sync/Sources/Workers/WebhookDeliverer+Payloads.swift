import Foundation
import LayerModels
import LayerServer

/// The bodies of deliveries: each event in its webhook's version, its resource rendered as the
/// API renders it.
extension WebhookDeliverer {
    /// The bodies of a batch for `webhook`, in its order: the messages of its message events are
    /// read and rendered together.
    func payloads(_ batch: [WebhookDelivery], _ webhook: WebhookRecord) async -> [Result<Data, any Error>] {
        let version = APIVersion(rawValue: webhook.version) ?? .v3_0
        let scope = Scope(
            app: webhook.appID, caller: .app, isBackend: true, urls: URLBuilder(base: baseURL(), serverAPIApp: webhook.appID),
            logger: logger)
        let conversationMessages = batch.filter { WebhookEvents.isConversationMessage($0.kind) }.compactMap(\.messageID)
        let messages: [UUID: JSONValue] =
            (try? await APIVersion.$current.withValue(version) {
                try await domain.messages.messages(conversationMessages, scope).mapValues { try jsonValue($0.withheld) }
            }) ?? [:]
        var bodies: [Result<Data, any Error>] = []
        for delivery in batch {
            do {
                bodies.append(.success(try await payload(delivery, webhook, messages: messages, scope)))
            } catch {
                bodies.append(.failure(error))
            }
        }
        return bodies
    }

    /// The body of `delivery` for `webhook`: the event, its actor, the resource as the Server API
    /// renders it in the webhook's version (a deleted one by its ids), and the app's `config`.
    /// `messages` are rendered already.
    func payload(_ delivery: WebhookDelivery, _ webhook: WebhookRecord, messages: [UUID: JSONValue], _ scope: Scope)
        async throws -> Data
    {
        let version = APIVersion(rawValue: webhook.version) ?? .v3_0
        let type = WebhookEvents.name(of: delivery.kind, version: webhook.version)
        var body = try await APIVersion.$current.withValue(version) {
            try await resources(delivery, version: version, messages: messages, scope)
        }
        var event: [String: JSONValue] = [
            "id": .string(delivery.requestID.lowercased), "type": .string(type),
            "created_at": .string(LayerTimestamp.string(delivery.occurredAt)),
        ]
        if version == .v1_0 {
            if let actor = delivery.actorID {
                event["actor"] = ["user_id": .string(actor)]
            } else if let name = delivery.actorName {
                event["actor"] = ["name": .string(name)]
            }
        } else if let actor = delivery.actorID {
            // A message's sender is its actor, rendered already.
            if let sender = body["message"]?["sender"], sender["user_id"] == .string(actor) {
                body["actor"] = sender
            } else {
                body["actor"] = await identity(actor, version: version, scope)
            }
        } else if let name = delivery.actorName {
            body["actor"] = ["name": .string(name)]
        }
        body["event"] = .object(event)
        if let config = webhook.config { body["config"] = .object(config.mapValues(JSONValue.string)) }
        return try StreamingJSONEncoder.data(JSONValue.object(body))
    }

    /// What the event is about, by the names of the webhook's version: 1.0 tells of a receipt
    /// with its message and of participants with their conversation; 2.0 and 3.0 with the
    /// `receipt`'s positions and the `changes`.
    private func resources(
        _ delivery: WebhookDelivery, version: APIVersion, messages: [UUID: JSONValue], _ scope: Scope
    ) async throws -> [String: JSONValue] {
        let container: UUID? = delivery.conversationID
        let data = delivery.data ?? [:]
        if version != .v1_0, ["message.delivered", "message.read", "Receipt.created"].contains(delivery.kind) {
            guard let container else { return [:] }
            return [
                "conversation": reference(.conversations, container, url: scope.urls.conversation(container)),
                "receipt": [
                    "type": delivery.kind == "message.delivered" ? "Delivery" : "Read",
                    "positions": ["from": data["from"] ?? .null, "to": data["to"] ?? .null],
                ],
            ]
        }
        switch delivery.kind {
        case "Participation.created", "Participation.deleted":
            guard let container else { return [:] }
            var users: [String] = []
            if case .array(let values)? = data["changes"] { users = values.compactMap(\.stringValue) }
            return [
                "conversation": reference(.conversations, container, url: scope.urls.conversation(container)),
                "changes": .array(
                    users.map { ["id": .string(LayerID.identity(userID: $0)), "user_id": .string($0)] }),
            ]
        case "Message.created", "Message.deleted":
            guard let id = delivery.messageID, let channel = container else { return [:] }
            if let found = try? await domain.channels.message(id, scope) { return ["message": try jsonValue(found)] }
            return ["message": ["id": .string(LayerID(.messages, id).uri), "channel": channelReference(channel, scope)]]
        case "Channel.created", "Channel.updated", "Channel.deleted":
            guard let channel = container else { return [:] }
            // A channel deleted by now is told by its id, and the name and metadata it had.
            var fields: [String: JSONValue] = [
                "id": .string(LayerID(.channels, channel).uri), "url": .string(scope.urls.channel(channel)),
            ]
            if case .object(let rendered)? = try? jsonValue(try await domain.channels.channel(channel, scope)) {
                fields = rendered
            }
            if let name = data["name"], fields["name"] == nil { fields["name"] = name }
            if let metadata = data["metadata"] { fields["metadata"] = metadata }
            return ["channel": .object(fields)]
        case "Membership.created", "Membership.deleted":
            guard let channel = container, let user = data["user_id"]?.stringValue else { return [:] }
            return [
                "membership": [
                    "id": .string(LayerID.membership(of: user, in: channel)),
                    "url": .string(scope.urls.membership(of: user, in: channel)),
                    "channel": channelReference(channel, scope),
                    "identity": await identity(user, version: version, scope),
                    "role": data["role"] ?? .null, "joined_at": data["joined_at"] ?? .null,
                ]
            ]
        default:
            if let id = delivery.messageID {
                if let rendered = messages[id] { return ["message": rendered] }
                return ["message": try await message(id, conversation: container, scope)]
            }
            guard let id = container else { return [:] }
            var conversation = try await conversation(id, scope)
            if case .object(var fields) = conversation, let metadata = data["metadata"] {
                fields["metadata"] = metadata
                conversation = .object(fields)
            }
            return ["conversation": conversation]
        }
    }

    /// A user's identity as the app reads it; only its ids if it cannot be read.
    private func identity(_ user: String, version: APIVersion, _ scope: Scope) async -> JSONValue {
        let found = try? await APIVersion.$current.withValue(version) {
            try jsonValue(try await domain.identities.identity(user, scope))
        }
        return found ?? ["id": .string(LayerID.identity(userID: user)), "user_id": .string(user)]
    }

    private func reference(_ kind: LayerID.Collection, _ id: UUID, url: String) -> JSONValue {
        ["id": .string(LayerID(kind, id).uri), "url": .string(url)]
    }

    private func channelReference(_ id: UUID, _ scope: Scope) -> JSONValue {
        reference(.channels, id, url: scope.urls.channel(id))
    }

    /// The message as the app reads it; once deleted, its id and its conversation's.
    private func message(_ id: UUID, conversation: UUID?, _ scope: Scope) async throws -> JSONValue {
        if let conversation, let found = try? await domain.messages.message(id, in: conversation, scope) {
            return try jsonValue(found.withheld)
        }
        var object: [String: JSONValue] = ["id": .string(LayerID(.messages, id).uri)]
        if let conversation {
            object["conversation"] = reference(.conversations, conversation, url: scope.urls.conversation(conversation))
        }
        return .object(object)
    }

    /// The conversation in the app's view; once deleted, its id.
    private func conversation(_ id: UUID, _ scope: Scope) async throws -> JSONValue {
        if let found = try? await domain.conversations.conversation(id, scope) { return try jsonValue(found) }
        return reference(.conversations, id, url: scope.urls.conversation(id))
    }
}
