/// One attribute of a STUN message: its type and its value, without the padding that follows it
/// on the wire.
public struct STUNAttribute: Sendable, Equatable {
    public var type: STUNAttributeType
    public var value: [UInt8]

    /// An attribute value holds at most 65,535 bytes (its length field has 16 bits).
    public init(type: STUNAttributeType, value: [UInt8]) {
        precondition(value.count <= Int(UInt16.max), "a STUN attribute value holds at most 65,535 bytes")
        self.type = type
        self.value = value
    }
}

/// The type of a STUN attribute. Types below 0x8000 are comprehension-required: an agent that does
/// not know one must not act on the message as if it were absent.
public struct STUNAttributeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    public var description: String {
        let hex = String(rawValue, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    // RFC 8489 section 14.
    public static let mappedAddress = STUNAttributeType(rawValue: 0x0001)
    public static let username = STUNAttributeType(rawValue: 0x0006)
    public static let messageIntegrity = STUNAttributeType(rawValue: 0x0008)
    public static let errorCode = STUNAttributeType(rawValue: 0x0009)
    public static let unknownAttributes = STUNAttributeType(rawValue: 0x000A)
    public static let realm = STUNAttributeType(rawValue: 0x0014)
    public static let nonce = STUNAttributeType(rawValue: 0x0015)
    public static let messageIntegritySHA256 = STUNAttributeType(rawValue: 0x001C)
    public static let passwordAlgorithm = STUNAttributeType(rawValue: 0x001D)
    public static let userhash = STUNAttributeType(rawValue: 0x001E)
    public static let xorMappedAddress = STUNAttributeType(rawValue: 0x0020)
    public static let software = STUNAttributeType(rawValue: 0x8022)
    public static let fingerprint = STUNAttributeType(rawValue: 0x8028)
    // ICE's (RFC 8445 section 16.1), which connectivity checks carry.
    public static let priority = STUNAttributeType(rawValue: 0x0024)
    public static let useCandidate = STUNAttributeType(rawValue: 0x0025)
}
