extension UnsafeRawBufferPointer {
    /// The big-endian number at `offset`; the caller has checked that its bytes are there.
    func uint16(at offset: Int) -> UInt16 {
        loadUnaligned(fromByteOffset: offset, as: UInt16.self).bigEndian
    }

    func uint32(at offset: Int) -> UInt32 {
        loadUnaligned(fromByteOffset: offset, as: UInt32.self).bigEndian
    }
}

/// `count` rounded up to a multiple of 4, as attribute values are padded.
func paddedLength(_ count: Int) -> Int {
    (count + 3) & ~3
}
