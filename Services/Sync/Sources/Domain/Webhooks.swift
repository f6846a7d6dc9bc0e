import Foundation
import LayerModels
import LayerServer
import Logging

/// An app's webhooks: registered, listed, activated (which verifies them again), deactivated and
/// deleted by the app's backend. A new or activated webhook is unverified until the verifier's
/// challenge (``WebhookVerifier``) is answered; the local verifier is woken at once.
struct Webhooks: Sendable {
    private let repository: WebhookRepository
    private let secrets: SealedSecrets
    private let targets: WebhookTargets
    /// Wakes this replica's verifier.
    private let verifications: Alarm
    /// Wakes this replica's deliverer.
    private let deliveries: Alarm
    private let delivery: WebhookDeliverySettings

    init(
        repositories: SyncRepositories, secrets: SealedSecrets, targets: WebhookTargets, verifications: Alarm,
        deliveries: Alarm, delivery: WebhookDeliverySettings
    ) {
        self.deliveries = deliveries
        repository = repositories.webhooks
        self.secrets = secrets
        self.targets = targets
        self.verifications = verifications
        self.delivery = delivery
    }

    /// Checks and stores a webhook from the body of a registration; 201 with it, unverified.
    func register(_ body: JSONValue, _ scope: Scope) async throws -> WebhookObject {
        let input = try WebhookInput(body, targets: targets)
        let record = try await repository.create(
            app: scope.app, input, sealedSecret: try secrets.seal(input.secret), delivery: delivery, logger: scope.logger)
        verifications.ring()
        return WebhookObject(record, urls: scope.urls)
    }

    func list(_ scope: Scope) async throws -> [WebhookObject] {
        try await repository.webhooks(app: scope.app, logger: scope.logger).map { WebhookObject($0, urls: scope.urls) }
    }

    func webhook(_ id: UUID, _ scope: Scope) async throws -> WebhookObject {
        guard let record = try await repository.webhook(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
        return WebhookObject(record, urls: scope.urls)
    }

    /// The webhook's latest 100 events and how their delivery went, newest first.
    func deliveries(_ id: UUID, _ scope: Scope) async throws -> [WebhookDeliveryObject] {
        guard let webhook = try await repository.webhook(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
        return try await repository.deliveryLog(webhook: id, limit: 100, logger: scope.logger).map { entry in
            var entry = entry
            entry.type = WebhookEvents.name(of: entry.kind, version: webhook.version)
            return entry
        }
    }

    /// Unverified again, and challenged at once.
    func activate(_ id: UUID, _ scope: Scope) async throws -> WebhookObject {
        guard let record = try await repository.activate(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
        verifications.ring()
        return WebhookObject(record, urls: scope.urls)
    }

    func deactivate(_ id: UUID, _ scope: Scope) async throws -> WebhookObject {
        guard
            let record = try await repository.deactivate(
                id, app: scope.app, reason: "Deactivated by User", logger: scope.logger)
        else {
            throw APIError.notFound("The webhook")
        }
        return WebhookObject(record, urls: scope.urls)
    }

    /// Stops deliveries until ``resume(_:_:)``, while its events are still recorded and kept.
    func pause(_ id: UUID, _ scope: Scope) async throws -> WebhookObject {
        guard let record = try await repository.pause(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
        return WebhookObject(record, urls: scope.urls)
    }

    /// Active again, delivering first what it missed while paused.
    func resume(_ id: UUID, _ scope: Scope) async throws -> WebhookObject {
        guard let record = try await repository.resume(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
        deliveries.ring()
        return WebhookObject(record, urls: scope.urls)
    }

    /// Sends again the kept events delivered since `since` (all of them without it); how many.
    func replay(_ id: UUID, since: Date?, _ scope: Scope) async throws -> Int {
        guard try await repository.webhook(id, app: scope.app, logger: scope.logger) != nil else {
            throw APIError.notFound("The webhook")
        }
        let count = try await repository.replay(id, since: since ?? .distantPast, logger: scope.logger)
        deliveries.ring()
        return count
    }

    func delete(_ id: UUID, _ scope: Scope) async throws {
        guard try await repository.delete(id, app: scope.app, logger: scope.logger) else {
            throw APIError.notFound("The webhook")
        }
    }
}
