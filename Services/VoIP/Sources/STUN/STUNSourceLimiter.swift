import LayerServer
import STUNCodec

/// What keeps the STUN server from being turned on others. A request's source address is not
/// proven (UDP), and each answer is some three times the size of the smallest request, so anyone
/// could make the server flood a victim by writing the victim's address as the source. So no
/// answer goes to a port below 1024, where system services listen (DNS, NTP, …) and no STUN
/// client does, and each source address (an IPv4 address, or an IPv6 /64, which one host commonly
/// holds entirely) gets answers at `limit.rate` a second, in bursts of `limit.burst`: far more
/// than a device needs to learn its address, far less than a flood. The table keeps the
/// `capacity` sources seen most recently. It belongs to the socket's event loop.
struct STUNSourceLimiter {
    private enum Source: Hashable {
        case ipv4(UInt32)
        case ipv6Prefix(UInt64)
    }

    let limit: RateLimiter.Limit?
    private var buckets: LRUTable<Source, TokenBucket>
    private let clock = ContinuousClock()

    /// `limit` nil: any number of answers (ports below 1024 still get none).
    init(limit: RateLimiter.Limit?, capacity: Int = 50_000) {
        self.limit = limit
        buckets = LRUTable(capacity: capacity)
    }

    /// Whether `sender` may be given an answer now; counts the answer when it may.
    mutating func allows(_ sender: STUNAddress) -> Bool {
        guard sender.port >= 1024 else { return false }
        guard let limit else { return true }
        let source: Source =
            switch sender.host {
            case .ipv4(let bits): .ipv4(bits)
            case .ipv6(let bits): .ipv6Prefix(UInt64(truncatingIfNeeded: bits >> 64))
            }
        let now = clock.now
        var bucket = buckets.use(source) ?? TokenBucket(full: limit, at: now)
        let allowed = bucket.take(limit, now: now) == nil
        buckets.set(source, bucket)
        return allowed
    }
}
