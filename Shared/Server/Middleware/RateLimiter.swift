import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// A token bucket per client: `rate` requests a second on average, bursts of `burst`. A client is
/// its address, or for IPv6 its whole /64, which one host commonly holds entirely (see
/// ``key(for:)``). The table of buckets keeps the `capacity` clients seen most recently; one
/// more forgets the least recently seen, in constant time, and a client forgotten only starts
/// again with a full bucket. A process has one limiter per rule (``RateLimiters``), whatever
/// number of its routes and services the rule covers.
public final class RateLimiter: Sendable {
    public struct Limit: Sendable {
        public var rate: Double
        public var burst: Double
        public init(rate: Double, burst: Double) {
            self.rate = rate
            self.burst = burst
        }
    }

    public let limit: Limit
    private let buckets: Mutex<LRUTable<String, TokenBucket>>
    private let clock = ContinuousClock()

    public init(_ limit: Limit, capacity: Int = 50_000) {
        self.limit = limit
        buckets = Mutex(LRUTable(capacity: capacity))
    }

    /// Takes one token from the bucket of the client at `address`; false when it is empty.
    public func allow(_ address: String) -> Bool { wait(address) == nil }

    /// Takes one token from the bucket of the client at `address`: nil when there was one, else
    /// how long until there will be.
    public func wait(_ address: String) -> Duration? {
        let key = Self.key(for: address)
        let now = clock.now
        return buckets.withLock { buckets in
            var bucket = buckets.use(key) ?? TokenBucket(full: limit, at: now)
            let wait = bucket.take(limit, now: now)
            buckets.set(key, bucket)
            return wait
        }
    }

    /// How many clients the table holds now.
    var trackedClients: Int { buckets.withLock { $0.count } }

    /// The client an address belongs to: an IPv4 address (also when written as an IPv4-mapped
    /// IPv6 address) stands for itself, an IPv6 address for the /64 it is in, written
    /// `2001:db8:0:1::/64`. Brackets and a zone are ignored; what is not an IP address at all
    /// stands for itself.
    public static func key(for address: String) -> String {
        var text = Substring(address.trimmingCharacters(in: .whitespaces))
        if text.first == "[", let end = text.firstIndex(of: "]") { text = text[text.index(after: text.startIndex)..<end] }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        guard text.contains(":"), case .v6(let v6)? = try? SocketAddress(ipAddress: String(text), port: 0) else {
            return String(text)
        }
        let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

/// The limits of the suite's abuse-prone rules, in requests per second per client, each with
/// bursts of three seconds' worth: new nonces (`POST /nonces` and the 401 challenges of every
/// service, which each make one), new sessions (`POST /sessions` and the inline
/// `Authorization: Layer identity-token`, each a key lookup and an RSA verification) and device
/// certificates.
public struct RateLimits: Sendable {
    public var nonces: RateLimiter.Limit
    public var sessions: RateLimiter.Limit
    public var certificates: RateLimiter.Limit

    public init(nonces: RateLimiter.Limit, sessions: RateLimiter.Limit, certificates: RateLimiter.Limit) {
        self.nonces = nonces
        self.sessions = sessions
        self.certificates = certificates
    }

    public static let standard = RateLimits(
        nonces: .init(rate: 20, burst: 60), sessions: .init(rate: 20, burst: 60),
        certificates: .init(rate: 2, burst: 10))

    /// `LAYER_RATE_LIMIT_{NONCES,SESSIONS,CERTIFICATES}`, requests per second per client.
    static func read(_ reader: inout SettingsReader) -> RateLimits {
        func limit(_ name: String, _ standard: RateLimiter.Limit) -> RateLimiter.Limit {
            let rate = reader.double(name, default: standard.rate)
            return .init(rate: rate, burst: max(rate * 3, 1))
        }
        return RateLimits(
            nonces: limit("LAYER_RATE_LIMIT_NONCES", standard.nonces),
            sessions: limit("LAYER_RATE_LIMIT_SESSIONS", standard.sessions),
            certificates: limit("LAYER_RATE_LIMIT_CERTIFICATES", standard.certificates))
    }
}

/// The one limiter of each rule in a process: every route and service the host builds draws on
/// these, so that a client gets the documented rate of a rule however many services of the
/// process answer it.
public struct RateLimiters: Sendable {
    public let nonces: RateLimiter
    public let sessions: RateLimiter
    public let certificates: RateLimiter

    public init(_ limits: RateLimits) {
        nonces = RateLimiter(limits.nonces)
        sessions = RateLimiter(limits.sessions)
        certificates = RateLimiter(limits.certificates)
    }
}

/// Answers 429 `rate_limit_exceeded`, with the `Retry-After` of the bucket, when the client has
/// spent its bucket. The client is the caller's address; or, after the session middleware, the
/// signed-in user, for routes whose cost falls on other people (a call rings every device of the
/// callee), where an address may stand for many honest users and one user for many addresses.
public struct RateLimitMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext

    public enum Client: Sendable {
        case address(TrustedProxies)
        case user
    }

    let limiter: RateLimiter
    let client: Client
    let message: String

    public init(_ limiter: RateLimiter, trustedProxies: TrustedProxies) {
        self.init(limiter, per: .address(trustedProxies), message: "Too many requests from this address; try again shortly.")
    }

    public init(_ limiter: RateLimiter, per client: Client, message: String) {
        self.limiter = limiter
        self.client = client
        self.message = message
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let key: String
        switch client {
        case .address(let trustedProxies): key = context.clientIP(request, trustedProxies: trustedProxies)
        case .user:
            let session = try context.requireSession()
            // The app's UUID first: such a key never reads as an IP address (see `RateLimiter.key(for:)`).
            key = "\(session.appID.uuidString)/\(session.userID)"
        }
        if let wait = limiter.wait(key) { throw APIError.rateLimited(message, retryAfter: wait) }
        return try await next(request, context)
    }
}

/// A token bucket: `limit.burst` tokens at most, refilled at `limit.rate` a second.
public struct TokenBucket: Sendable {
    var tokens: Double
    var updated: ContinuousClock.Instant

    /// A bucket that is full at `now`.
    public init(full limit: RateLimiter.Limit, at now: ContinuousClock.Instant) {
        tokens = limit.burst
        updated = now
    }

    /// Refills the bucket for the time since it was last used and takes a token: nil when there
    /// was one, else how long until there will be (and nothing is taken).
    public mutating func take(_ limit: RateLimiter.Limit, now: ContinuousClock.Instant) -> Duration? {
        let elapsed = now - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(limit.burst, tokens + max(0, seconds) * limit.rate)
        updated = now
        guard tokens < 1 else {
            tokens -= 1
            return nil
        }
        return .seconds((1 - tokens) / limit.rate)
    }
}

extension APIError {
    /// 429 `rate_limit_exceeded`, with `Retry-After`: the whole seconds until the client may try
    /// again (at least 1).
    public static func rateLimited(_ message: String, retryAfter wait: Duration = .seconds(1)) -> APIError {
        let seconds = max(1, Int((Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18).rounded(.up)))
        return APIError(.rateLimitExceeded, message, headers: [.retryAfter: String(seconds)])
    }
}
