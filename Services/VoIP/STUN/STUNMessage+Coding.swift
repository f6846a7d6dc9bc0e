extension STUNMessage {
    /// Reads a message from the bytes of one datagram. Any input either decodes or throws: the
    /// header, the attributes' layout and a FINGERPRINT are checked here; attribute values are
    /// checked by the accessors that read them.
    public init(decoding bytes: [UInt8]) throws(STUNDecodingError) {
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(STUNDecodingError) in try STUNMessage(decoding: buffer) }
        }
        self = try decoded.get()
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(STUNDecodingError) {
        let frame = try STUNFrame(validating: bytes)
        messageClass = frame.messageClass
        method = frame.method
        transactionID = frame.transactionID
        attributes = frame.attributes.map { STUNAttribute(type: $0.type, value: Array(bytes[$0.value])) }
    }

    /// The message on the wire. With `fingerprint`, FINGERPRINT attributes among ``attributes``
    /// are left out and a new one, computed over the message, ends it; without, the attributes
    /// are written as they are.
    ///
    /// A message holds at most 65,535 bytes of attributes: this traps beyond.
    public func encoded(fingerprint: Bool = true) -> [UInt8] {
        let written = fingerprint ? attributes.filter { $0.type != .fingerprint } : attributes
        let size = Self.headerSize + written.reduce(fingerprint ? 8 : 0) { $0 + 4 + paddedLength($1.value.count) }
        precondition(size - Self.headerSize <= Int(UInt16.max), "a STUN message holds at most 65,535 bytes of attributes")
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var writer = STUNWriter(UnsafeMutableRawBufferPointer(buffer))
            writer.header(STUNMessageType.make(messageClass, method), transactionID: transactionID)
            for attribute in written {
                attribute.value.withUnsafeBytes { writer.attribute(attribute.type, $0) }
            }
            count = writer.finish(fingerprint: fingerprint)
        }
    }
}
