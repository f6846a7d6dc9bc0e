/// A STUN message (RFC 8489 section 5): its class, method, transaction id and attributes, in
/// the order they travel. ``init(decoding:)`` reads one from a datagram and ``encoded(fingerprint:)``
/// writes it.
public struct STUNMessage: Sendable, Equatable {
    /// The fixed value of bytes 4 to 8 of every message since RFC 5389.
    public static let magicCookie: UInt32 = 0x2112_A442
    /// The size of the header that precedes the attributes.
    public static let headerSize = 20

    public var messageClass: STUNClass
    public var method: STUNMethod
    public var transactionID: STUNTransactionID
    public var attributes: [STUNAttribute]

    public init(
        _ messageClass: STUNClass, _ method: STUNMethod, transactionID: STUNTransactionID = .random(),
        attributes: [STUNAttribute] = []
    ) {
        self.messageClass = messageClass
        self.method = method
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// The first attribute of `type`, if there is one.
    public func attribute(_ type: STUNAttributeType) -> STUNAttribute? {
        attributes.first { $0.type == type }
    }
}

/// The four classes of STUN message.
public enum STUNClass: UInt8, Sendable, CaseIterable {
    case request = 0b00
    case indication = 0b01
    case successResponse = 0b10
    case errorResponse = 0b11
}

/// A STUN method: a 12-bit number. Binding is the one STUN itself defines; TURN adds others.
public struct STUNMethod: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16

    /// Nil above 0xFFF, which does not fit the 12 bits of the header.
    public init?(rawValue: UInt16) {
        guard rawValue <= 0x0FFF else { return nil }
        self.rawValue = rawValue
    }

    public static let binding = STUNMethod(rawValue: 0x001)!
}

/// The 16-bit message type of the header, where the two class bits sit between the method's bits:
/// bits 0-3 are M0-M3, bit 4 is C0, bits 5-7 are M4-M6, bit 8 is C1 and bits 9-13 are M7-M11.
enum STUNMessageType {
    static func make(_ messageClass: STUNClass, _ method: STUNMethod) -> UInt16 {
        let method = method.rawValue
        let bits = UInt16(messageClass.rawValue)
        return (method & 0x000F) | ((method & 0x0070) << 1) | ((method & 0x0F80) << 2) | ((bits & 0b01) << 4)
            | ((bits & 0b10) << 7)
    }

    /// The class and method of a type whose two top bits are zero.
    static func split(_ type: UInt16) -> (STUNClass, STUNMethod) {
        let method = (type & 0x000F) | ((type & 0x00E0) >> 1) | ((type & 0x3E00) >> 2)
        let bits = UInt8(truncatingIfNeeded: ((type & 0x0010) >> 4) | ((type & 0x0100) >> 7))
        // Both are in range by construction: two bits make a class, twelve a method.
        return (STUNClass(rawValue: bits) ?? .request, STUNMethod(rawValue: method) ?? .binding)
    }
}
