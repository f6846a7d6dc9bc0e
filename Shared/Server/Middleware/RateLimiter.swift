import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// A token bucket per key (client address): `rate` requests a second on average, bursts of
/// `burst`. One limiter is shared by the routes of one abuse-prone kind within one process.
public final class RateLimiter: Sendable {
    public struct Limit: Sendable {
        public var rate: Double
        public var burst: Double
        public init(rate: Double, burst: Double) {
            self.rate = rate
            self.burst = burst
        }
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    public let limit: Limit
    private let buckets = Mutex<[String: Bucket]>([:])
    private let clock = ContinuousClock()
    private static let maxTrackedKeys = 50_000

    public init(_ limit: Limit) {
        self.limit = limit
    }

    /// Takes one token from `key`'s bucket; false when it is empty.
    public func allow(_ key: String) -> Bool {
        let now = clock.now
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(limit.burst, bucket.tokens + seconds * limit.rate)
            bucket.updated = now
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            if buckets.count >= Self.maxTrackedKeys { Self.evictFull(&buckets, now: now, limit: limit) }
            buckets[key] = bucket
            return allowed
        }
    }

    /// Forgets buckets that have refilled: they behave exactly like new ones.
    private static func evictFull(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant, limit: Limit) {
        let refill = Duration.seconds(limit.burst / max(limit.rate, 0.001))
        buckets = buckets.filter { now - $0.value.updated < refill }
    }
}

/// Answers 429 `rate_limit_exceeded` when the caller's address has spent its bucket.
public struct RateLimitMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext
    let limiter: RateLimiter
    let trustedProxies: Set<String>

    public init(_ limiter: RateLimiter, trustedProxies: Set<String>) {
        self.limiter = limiter
        self.trustedProxies = trustedProxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard limiter.allow(context.clientIP(request, trustedProxies: trustedProxies)) else {
            throw APIError(
                .rateLimitExceeded, "Too many requests from this address; try again shortly.",
                headers: [.retryAfter: "1"])
        }
        return try await next(request, context)
    }
}
