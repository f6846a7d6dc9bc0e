import Foundation
import Hummingbird
import Synchronization

/// A webhook's receiver at `/hook`: it answers the challenge, and answers deliveries with the statuses of `answers`
/// in turn (204 once they run out), keeping every delivery it got.
public final class WebhookReceiver: Sendable {
    public init() {}

    public struct Delivery: Sendable {
        public var headers: [String: String]
        public var body: Data
    }
    public let answers = Mutex<[HTTPResponse.Status]>([])
    public let deliveries = Mutex<[Delivery]>([])
    /// How long each delivery is kept waiting before its answer.
    public let delay = Mutex<Duration?>(nil)

    public func routes(_ router: Router<BasicRequestContext>) {
        router.get("hook") { request, _ -> Response in
            let challenge = request.uri.queryParameters["verification_challenge"].map(String.init) ?? ""
            return Response(status: .ok, body: .init(byteBuffer: .init(string: challenge)))
        }
        router.post("hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            self.deliveries.withLock { $0.append(Delivery(headers: headers, body: Data(buffer: body))) }
            if let delay = self.delay.withLock({ $0 }) { try await Task.sleep(for: delay) }
            let status = self.answers.withLock { $0.isEmpty ? HTTPResponse.Status.noContent : $0.removeFirst() }
            return Response(status: status)
        }
    }

    /// The deliveries once there are `count`, or after 30 seconds: other tests' servers share the
    /// database and take deliveries too, and one that stops halfway holds its lease a few seconds.
    public func waitFor(_ count: Int) async throws -> [Delivery] {
        for _ in 0..<600 {
            let got = deliveries.withLock { $0 }
            if got.count >= count { return got }
            try await Task.sleep(for: .milliseconds(50))
        }
        return deliveries.withLock { $0 }
    }
}
