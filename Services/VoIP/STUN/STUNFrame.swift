/// A datagram that passed the checks RFC 8489 section 6.3 asks of every message before it is
/// acted on: the header's fixed bits and length, attributes that fit, and a FINGERPRINT, if there
/// is one, that is last and right. It reads the bytes where they are, without copying them.
struct STUNFrame {
    let bytes: UnsafeRawBufferPointer
    let messageClass: STUNClass
    let method: STUNMethod

    init(validating bytes: UnsafeRawBufferPointer) throws(STUNDecodingError) {
        guard bytes.count >= STUNMessage.headerSize else { throw .tooShort }
        let type = bytes.uint16(at: 0)
        guard type & 0xC000 == 0, bytes.uint32(at: 4) == STUNMessage.magicCookie else { throw .notSTUN }
        let length = Int(bytes.uint16(at: 2))
        guard length % 4 == 0, length == bytes.count - STUNMessage.headerSize else { throw .badLength }
        var walk = Attributes(bytes: bytes)
        while let attribute = walk.next() {
            guard walk.offset <= bytes.count else { throw .truncatedAttribute }
            if attribute.type == .fingerprint {
                guard attribute.value.count == 4 else { throw .malformedAttribute(.fingerprint) }
                guard walk.offset == bytes.count else { throw .misplacedFingerprint }
                // The header's length already counts the FINGERPRINT, as the RFC wants it for the CRC.
                let covered = UnsafeRawBufferPointer(rebasing: bytes[..<(attribute.value.lowerBound - 4)])
                guard bytes.uint32(at: attribute.value.lowerBound) == CRC32.fingerprint(covered) else {
                    throw .badFingerprint
                }
            }
        }
        (messageClass, method) = STUNMessageType.split(type)
        self.bytes = bytes
    }

    var transactionID: STUNTransactionID {
        STUNTransactionID(unchecked: (8..<20).reduce(0) { $0 << 8 | UInt128(bytes[$1]) })
    }

    var attributes: Attributes { Attributes(bytes: bytes) }

    /// The attributes in order: each one's type and where its value lies (padding excluded).
    struct Attributes: Sequence, IteratorProtocol {
        let bytes: UnsafeRawBufferPointer
        /// Where the next attribute starts; beyond the end after an attribute that overruns it.
        private(set) var offset = STUNMessage.headerSize

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        mutating func next() -> (type: STUNAttributeType, value: Range<Int>)? {
            guard bytes.count - offset >= 4 else { return nil }
            let type = STUNAttributeType(rawValue: bytes.uint16(at: offset))
            let start = offset + 4
            let length = Int(bytes.uint16(at: offset + 2))
            offset = start + paddedLength(length)
            return (type, start..<start + length)
        }
    }
}
