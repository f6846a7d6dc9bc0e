import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import ServiceLifecycle

/// Challenges new and reactivated webhooks: `GET <target_url>?verification_challenge=<random>`
/// must answer 200 with the challenge as its body (any content type) within a few seconds, and the
/// webhook turns `active`; anything else turns it `inactive` with the reason. There is no retry:
/// the app activates it again. Replicas share the work: each takes due webhooks under a lease.
/// The replica that registers or activates a webhook rings its alarm; the others look every
/// `longestSleep`, which bounds the wait only when that replica is gone.
struct WebhookVerifier: Service {
    let repository: WebhookRepository
    let alarm: Alarm
    let http: HTTPClient
    /// How long a target has to answer.
    var timeout: Duration = .seconds(5)
    var longestSleep: Duration = .seconds(30)
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let due = try await withDeadline(WebhookDeliverer.databaseLimit) {
                        try await repository.dueForVerification(limit: 10, lease: .seconds(60), logger: logger)
                    }
                    await withTaskGroup(of: Void.self) { group in
                        for webhook in due { group.addTask { await verify(webhook) } }
                    }
                    if due.count == 10 { continue }
                } catch {
                    logger.warning("Could not take webhooks to verify", metadata: ["error": "\(error)"])
                }
                await alarm.wait(upTo: longestSleep)
            }
        }
    }

    func verify(_ webhook: WebhookRecord) async {
        let failure = await challenge(webhook.targetURL, privateTargets: webhook.privateTargets)
        do {
            try await withDeadline(WebhookDeliverer.databaseLimit) {
                try await repository.verified(webhook.id, verification: webhook.verification, failure: failure, logger: logger)
            }
        } catch {
            // Taken again once its lease runs out.
            logger.warning("Could not record a webhook's verification", metadata: ["error": "\(error)"])
        }
    }

    /// Nil when `target` answered the challenge, else why not.
    func challenge(_ target: String, privateTargets: Bool) async -> String? {
        if let refusal = await WebhookTargets.refusal(calling: target, privateTargets: privateTargets) {
            return "Verification failed: \(refusal)"
        }
        let challenge = Secrets.randomToken()
        let separator = target.contains("?") ? "&" : "?"
        var request = HTTPClientRequest(url: target + separator + "verification_challenge=" + challenge)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: "layer-webhooks")
        do {
            let response = try await http.execute(request, timeout: .init(timeout))
            let body = try await response.body.collect(upTo: 64 * 1024)
            guard response.status.code == 200 else {
                return
                    "Verification failed due to unexpected response status: \(response.status.code) \(response.status.reasonPhrase)"
            }
            guard String(buffer: body) == challenge else {
                return "Verification failed: the response's body was not the challenge"
            }
            return nil
        } catch {
            return "Verification failed: \(error)"
        }
    }
}

extension HTTPClient {
    /// The client that calls apps' webhooks: it follows no redirect (a target is called where it
    /// was registered, and nowhere its answer points).
    static let webhooks: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout.connect = .seconds(5)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}
