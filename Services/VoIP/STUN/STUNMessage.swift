/// A STUN message (RFC 8489): its class, method, transaction id and attributes.
public struct STUNMessage: Sendable, Equatable {
    public static let magicCookie: UInt32 = 0x2112_A442
}
