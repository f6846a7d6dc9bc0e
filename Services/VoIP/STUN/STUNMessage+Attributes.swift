/// The attributes of RFC 8489 section 14 as values: accessors that read the first attribute of
/// a type (nil when there is none, an error when its value is malformed) and constructors.
extension STUNMessage {
    public var xorMappedAddress: STUNAddress? {
        get throws(STUNDecodingError) { try address(.xorMappedAddress, xor: transactionID.xorMask) }
    }

    public var mappedAddress: STUNAddress? {
        get throws(STUNDecodingError) { try address(.mappedAddress, xor: nil) }
    }

    public var username: String? {
        get throws(STUNDecodingError) { try text(.username, maximumBytes: 513) }
    }

    public var realm: String? {
        get throws(STUNDecodingError) { try text(.realm, maximumBytes: 763) }
    }

    public var nonce: String? {
        get throws(STUNDecodingError) { try text(.nonce, maximumBytes: 763) }
    }

    public var software: String? {
        get throws(STUNDecodingError) { try text(.software, maximumBytes: 763) }
    }

    public var errorCode: STUNErrorCode? {
        get throws(STUNDecodingError) {
            guard let value = attribute(.errorCode)?.value else { return nil }
            guard value.count >= 4, (3...6).contains(value[2] & 0x07), value[3] < 100,
                let reason = String(validating: value[4...], as: UTF8.self)
            else { throw .malformedAttribute(.errorCode) }
            return STUNErrorCode(Int(value[2] & 0x07) * 100 + Int(value[3]), reason: reason)
        }
    }

    public var unknownAttributes: [STUNAttributeType]? {
        get throws(STUNDecodingError) {
            guard let value = attribute(.unknownAttributes)?.value else { return nil }
            guard value.count % 2 == 0 else { throw .malformedAttribute(.unknownAttributes) }
            return stride(from: 0, to: value.count, by: 2).map {
                STUNAttributeType(rawValue: UInt16(value[$0]) << 8 | UInt16(value[$0 + 1]))
            }
        }
    }

    /// The HMAC-SHA1 of MESSAGE-INTEGRITY, unverified: this codec does no authentication.
    public var messageIntegrity: [UInt8]? {
        get throws(STUNDecodingError) {
            guard let value = attribute(.messageIntegrity)?.value else { return nil }
            guard value.count == 20 else { throw .malformedAttribute(.messageIntegrity) }
            return value
        }
    }

    /// The CRC of FINGERPRINT; a decoded message's is right, or it would not have decoded.
    public var fingerprint: UInt32? {
        guard let value = attribute(.fingerprint)?.value, value.count == 4 else { return nil }
        return value.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private func address(_ type: STUNAttributeType, xor mask: UInt128?) throws(STUNDecodingError) -> STUNAddress? {
        guard let value = attribute(type)?.value else { return nil }
        // Family 1 is IPv4 (4 address bytes), family 2 IPv6 (16).
        guard (value.count == 8 && value[1] == 1) || (value.count == 20 && value[1] == 2) else {
            throw .malformedAttribute(type)
        }
        let mask = mask ?? 0
        let port = (UInt16(value[2]) << 8 | UInt16(value[3])) ^ UInt16(truncatingIfNeeded: mask >> 112)
        let bits = value[4...].reduce(UInt128(0)) { $0 << 8 | UInt128($1) }
        if value.count == 8 {
            return STUNAddress(.ipv4(UInt32(truncatingIfNeeded: bits) ^ UInt32(truncatingIfNeeded: mask >> 96)), port: port)
        }
        return STUNAddress(.ipv6(bits ^ mask), port: port)
    }

    private func text(_ type: STUNAttributeType, maximumBytes: Int) throws(STUNDecodingError) -> String? {
        guard let value = attribute(type)?.value else { return nil }
        guard value.count <= maximumBytes, let text = String(validating: value, as: UTF8.self) else {
            throw .malformedAttribute(type)
        }
        return text
    }
}

extension STUNAttribute {
    public static func xorMappedAddress(_ address: STUNAddress, transactionID: STUNTransactionID) -> STUNAttribute {
        addressAttribute(.xorMappedAddress, address, xor: transactionID.xorMask)
    }

    public static func mappedAddress(_ address: STUNAddress) -> STUNAttribute {
        addressAttribute(.mappedAddress, address, xor: nil)
    }

    public static func username(_ text: String) -> STUNAttribute {
        STUNAttribute(type: .username, value: Array(text.utf8))
    }

    public static func realm(_ text: String) -> STUNAttribute {
        STUNAttribute(type: .realm, value: Array(text.utf8))
    }

    public static func nonce(_ text: String) -> STUNAttribute {
        STUNAttribute(type: .nonce, value: Array(text.utf8))
    }

    public static func software(_ text: String) -> STUNAttribute {
        STUNAttribute(type: .software, value: Array(text.utf8))
    }

    public static func errorCode(_ error: STUNErrorCode) -> STUNAttribute {
        let value = [0, 0, UInt8(error.code / 100), UInt8(error.code % 100)] + Array(error.reason.utf8)
        return STUNAttribute(type: .errorCode, value: value)
    }

    public static func unknownAttributes(_ types: [STUNAttributeType]) -> STUNAttribute {
        STUNAttribute(type: .unknownAttributes, value: types.flatMap { [UInt8($0.rawValue >> 8), UInt8($0.rawValue & 0xFF)] })
    }

    private static func addressAttribute(_ type: STUNAttributeType, _ address: STUNAddress, xor mask: UInt128?) -> STUNAttribute {
        let value = [UInt8](unsafeUninitializedCapacity: address.attributeLength) { buffer, count in
            var writer = STUNWriter(UnsafeMutableRawBufferPointer(buffer))
            writer.address(address, xor: mask)
            count = writer.count
        }
        return STUNAttribute(type: type, value: value)
    }
}
