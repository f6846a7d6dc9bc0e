/// CRC-32 as zlib and ISO HDLC compute it (reflected polynomial 0xEDB88320), for FINGERPRINT.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        table.withUnsafeBufferPointer { table in
            ~bytes.reduce(0xFFFF_FFFF) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
    }

    /// The value of a FINGERPRINT attribute that follows `bytes` (RFC 8489 section 14.7): the
    /// CRC-32 XORed with "STUN", so that it differs from CRCs other protocols carry.
    static func fingerprint(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        checksum(bytes) ^ 0x5354_554E
    }
}
