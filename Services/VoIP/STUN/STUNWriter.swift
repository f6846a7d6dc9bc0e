/// Writes a STUN message, field after field, into memory the caller has sized for it.
struct STUNWriter {
    private let buffer: UnsafeMutableRawBufferPointer
    /// The bytes written so far.
    private(set) var count = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// The header, its length left for ``finish(fingerprint:)``. `cookieAndID` is the 16 bytes of
    /// cookie and transaction id, as a request carries them (a response repeats them).
    mutating func header(_ type: UInt16, cookieAndID: UnsafeRawBufferPointer) {
        write(type)
        write(UInt16(0))
        write(cookieAndID)
    }

    mutating func header(_ type: UInt16, transactionID: STUNTransactionID) {
        write(type)
        write(UInt16(0))
        write(STUNMessage.magicCookie)
        write(UInt32(truncatingIfNeeded: transactionID.value >> 64))
        write(UInt64(truncatingIfNeeded: transactionID.value))
    }

    mutating func attribute(_ type: STUNAttributeType, _ value: UnsafeRawBufferPointer) {
        attributeHeader(type, length: value.count)
        write(value)
        pad()
    }

    mutating func attributeHeader(_ type: STUNAttributeType, length: Int) {
        write(type.rawValue)
        write(UInt16(truncatingIfNeeded: length))
    }

    /// A MAPPED-ADDRESS or XOR-MAPPED-ADDRESS value (RFC 8489 sections 14.1 and 14.2); with a
    /// mask, the port is XORed with the cookie's top half and the address with the cookie (IPv4)
    /// or with the cookie and the transaction id (IPv6).
    mutating func address(_ address: STUNAddress, xor mask: UInt128?) {
        let mask = mask ?? 0
        write(UInt8(0))
        switch address.host {
        case .ipv4(let bits):
            write(UInt8(1))
            write(address.port ^ UInt16(truncatingIfNeeded: mask >> 112))
            write(bits ^ UInt32(truncatingIfNeeded: mask >> 96))
        case .ipv6(let bits):
            write(UInt8(2))
            write(address.port ^ UInt16(truncatingIfNeeded: mask >> 112))
            let masked = bits ^ mask
            write(UInt64(truncatingIfNeeded: masked >> 64))
            write(UInt64(truncatingIfNeeded: masked))
        }
    }

    /// Sets the header's length and, with `fingerprint`, appends FINGERPRINT (the length counts
    /// it before the CRC is taken, as RFC 8489 section 14.7 asks). The size of the message.
    mutating func finish(fingerprint: Bool) -> Int {
        let length = count - STUNMessage.headerSize + (fingerprint ? 8 : 0)
        buffer.storeBytes(of: UInt16(truncatingIfNeeded: length).bigEndian, toByteOffset: 2, as: UInt16.self)
        if fingerprint {
            let crc = CRC32.fingerprint(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            attributeHeader(.fingerprint, length: 4)
            write(crc)
        }
        return count
    }

    mutating func write<Integer: FixedWidthInteger>(_ value: Integer) {
        buffer.storeBytes(of: value.bigEndian, toByteOffset: count, as: Integer.self)
        count += MemoryLayout<Integer>.size
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        UnsafeMutableRawBufferPointer(rebasing: buffer[count..<count + bytes.count]).copyMemory(from: bytes)
        count += bytes.count
    }

    /// Zeros up to the next multiple of 4.
    mutating func pad() {
        while count % 4 != 0 { write(UInt8(0)) }
    }
}

extension STUNAddress {
    /// The size of its MAPPED-ADDRESS or XOR-MAPPED-ADDRESS value.
    var attributeLength: Int {
        switch host {
        case .ipv4: 8
        case .ipv6: 20
        }
    }
}
