/// The 96-bit transaction id of a STUN message, which pairs a response with its request.
public struct STUNTransactionID: Hashable, Sendable, CustomStringConvertible {
    /// The 96 bits; the 32 above them are zero.
    public let value: UInt128

    /// Nil when `value` needs more than 96 bits.
    public init?(_ value: UInt128) {
        guard value >> 96 == 0 else { return nil }
        self.value = value
    }

    /// Nil unless there are exactly 12 bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        value = bytes.reduce(0) { $0 << 8 | UInt128($1) }
    }

    /// A new id from the system's random source, as every new transaction needs (RFC 8489
    /// section 6: uniform and random, so that an attacker cannot guess it).
    public static func random() -> STUNTransactionID {
        var generator = SystemRandomNumberGenerator()
        let high = UInt128(generator.next() as UInt32)
        let low = UInt128(generator.next() as UInt64)
        return STUNTransactionID(unchecked: high << 64 | low)
    }

    /// For a value known to fit 96 bits.
    init(unchecked value: UInt128) {
        self.value = value
    }

    /// The 12 bytes, most significant first.
    public var bytes: [UInt8] {
        (0..<12).map { UInt8(truncatingIfNeeded: value >> (8 * (11 - $0))) }
    }

    /// The cookie and the id together: what an IPv6 address in XOR-MAPPED-ADDRESS is XORed with.
    var xorMask: UInt128 {
        UInt128(STUNMessage.magicCookie) << 96 | value
    }

    public var description: String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 24 - hex.count) + hex
    }
}
