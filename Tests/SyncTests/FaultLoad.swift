import AsyncHTTPClient
import Foundation
import LayerModels
import LayerTesting
import NIOCore
import Synchronization
import Testing

/// The steady load of the fault tests: senders that post messages one after another until told to
/// stop, and what each request came to.
enum FaultLoad {
    /// What one request came to: its status, or the error of a request that got no answer.
    struct Outcome: Sendable {
        var status: Int?
        var failure: String?
        var retryAfter: String?
        var messageID: String?
        /// The client gave up waiting: the request hung.
        var timedOut = false
    }

    /// Runs `senders` tasks that each send to `conversation` as `user` until `stop` is set, next to
    /// `faults`, which sets it when it is done; every request's outcome.
    static func send(
        senders: Int, as user: UserClient, to conversation: String, stop: StopFlag,
        while faults: @escaping @Sendable () async throws -> Void
    ) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: [Outcome].self) { group in
            for sender in 0..<senders {
                group.addTask {
                    var outcomes: [Outcome] = []
                    var index = 0
                    while !stop.isSet {
                        index += 1
                        let outcome = await send("s\(sender)-\(index)", as: user, to: conversation)
                        outcomes.append(outcome)
                        // Refused connections fail at once: do not spin while a service is down.
                        if outcome.status == nil { try await Task.sleep(for: .milliseconds(20)) }
                    }
                    return outcomes
                }
            }
            group.addTask {
                try await faults()
                stop.set()
                return []
            }
            return try await group.reduce(into: [Outcome]()) { $0 += $1 }
        }
    }

    /// One `POST …/messages`, with a 15 s client deadline (a request past it hung).
    static func send(_ text: String, as user: UserClient, to conversation: String) async -> Outcome {
        var request = HTTPClientRequest(url: user.client.baseURL + "/\(path(conversation))/messages")
        request.method = .POST
        request.headers.add(name: "Accept", value: MediaType.layerJSON)
        request.headers.add(name: "Content-Type", value: MediaType.json)
        for (name, value) in user.auth { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: #"{"parts":[{"mime_type":"text/plain","body":"\#(text)"}]}"#))
        do {
            let response = try await user.client.send(request, timeout: .seconds(15))
            return Outcome(
                status: response.status, retryAfter: response.headers.first(name: "Retry-After"),
                messageID: response.status == 201 ? response.json?["id"]?.stringValue : nil)
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return Outcome(failure: "\(error)", timedOut: true)
        } catch {
            return Outcome(failure: "\(error)")
        }
    }

    /// What every process fault test expects of its senders: no request hung, every answer was 201
    /// or 503, and more than 50 messages went through. The ids of the acknowledged messages.
    static func acknowledged(
        _ outcomes: [Outcome], sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String] {
        let hung = outcomes.filter(\.timedOut)
        #expect(hung.isEmpty, "requests that hung: \(hung.count)", sourceLocation: sourceLocation)
        let unexpected = outcomes.compactMap(\.status).filter { $0 != 201 && $0 != 503 }
        #expect(unexpected.isEmpty, "statuses other than 201 and 503: \(unexpected)", sourceLocation: sourceLocation)
        let acknowledged = outcomes.compactMap(\.messageID)
        #expect(
            acknowledged.count > 50, "the senders got through (\(acknowledged.count) acknowledged)",
            sourceLocation: sourceLocation)
        return acknowledged
    }

    /// Checks that every acknowledged message is in `reader`'s changelog after `anchor` exactly once
    /// and can be read; the ids missing and the ids found twice.
    static func findAcknowledged(
        _ acknowledged: [String], by reader: UserClient, after anchor: JSONValue
    ) async throws -> (missing: [String], twice: [String]) {
        let logged = try await reader.catchUp(from: anchor).operations
            .filter { $0["type"]?.stringValue == "new_message" }.compactMap { $0["message_id"]?.stringValue }
        let counts = Dictionary(logged.map { ($0, 1) }, uniquingKeysWith: +)
        var missing = acknowledged.filter { counts[$0] == nil }
        for id in acknowledged.prefix(20) where try await reader.get("/\(path(id))").status != 200 {
            missing.append(id)
        }
        return (missing, counts.filter { $0.value > 1 }.map(\.key))
    }
}

/// A webhook's side of the fault tests: a receiver registered for `message.sent`, and whether
/// every acknowledged message reached it.
struct FaultWebhook {
    let receiver = WebhookReceiver()

    /// Registers a 1.0 webhook for `message.sent` at the receiver on `port`, through `client` (the
    /// sync service) with a Server API token of `app`, and waits until it is active.
    func register(port: Int, app: String, token: String, client: TestClient) async throws {
        let accept = "application/vnd.layer.webhooks+json; version=1.0"
        let headers = [("Authorization", "Bearer \(token)")]
        let made = try await client.request(
            .POST, "/apps/\(app)/webhooks", headers: headers,
            json: [
                "version": "1.0", "target_url": .string("http://127.0.0.1:\(port)/hook"), "events": ["message.sent"],
                "secret": "fault-secret",
            ], accept: accept)
        let id = try #require(made.json?["id"]?.stringValue, "\(made.text)")
        for _ in 0..<200 {
            let read = try await client.request(
                .GET, "/apps/\(app)/webhooks/\(id.split(separator: "/").last!)", headers: headers, accept: accept)
            if read.json?["status"] == "active" { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the webhook did not turn active")
    }

    /// Waits up to `limit` for every acknowledged message to reach the receiver; those that did
    /// not, and how many deliveries came more than once (at least once allows them).
    func awaitDeliveries(of acknowledged: [String], limit: Duration = .seconds(60)) async throws
        -> (missing: [String], repeated: Int)
    {
        let deadline = ContinuousClock.now + limit
        while true {
            let delivered = receiver.deliveries.withLock { $0 }.compactMap {
                (try? JSONDecoder().decode(JSONValue.self, from: $0.body))?["message"]?["id"]?.stringValue
            }
            let seen = Set(delivered)
            let missing = acknowledged.filter { !seen.contains($0) }
            if missing.isEmpty || ContinuousClock.now > deadline { return (missing, delivered.count - seen.count) }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// Tells the senders of a test to stop.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
