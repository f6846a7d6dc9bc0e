import STUNCodec
import Testing

/// The codec against the test vectors of RFC 5769 (MESSAGE-INTEGRITY is read as bytes: the
/// codec does no authentication, so the HMACs are not checked).
@Suite struct RFC5769Tests {
    @Test func sampleRequest() throws {
        let message = try STUNMessage(decoding: RFC5769.request)
        #expect(message.messageClass == .request)
        #expect(message.method == .binding)
        #expect(message.transactionID.bytes == RFC5769.transactionID)
        #expect(message.attributes.map(\.type.rawValue) == [0x8022, 0x0024, 0x8029, 0x0006, 0x0008, 0x8028])
        #expect(try message.software == "STUN test client")
        #expect(try message.username == "evtj:h6vY")
        #expect(message.attribute(.priority)?.value == [0x6E, 0x00, 0x01, 0xFF])
        #expect(try message.messageIntegrity?.prefix(4) == [0x9A, 0xEA, 0xA7, 0x0C])
        #expect(message.fingerprint == 0xE57A_3BCF)
    }

    @Test func sampleIPv4Response() throws {
        let message = try STUNMessage(decoding: RFC5769.ipv4Response)
        #expect(message.messageClass == .successResponse)
        #expect(message.method == .binding)
        #expect(message.transactionID.bytes == RFC5769.transactionID)
        #expect(try message.software == "test vector")
        #expect(try message.xorMappedAddress == STUNAddress(.ipv4(0xC000_0201), port: 32853))
        #expect(try message.xorMappedAddress?.description == "192.0.2.1:32853")
        #expect(try message.messageIntegrity?.count == 20)
        #expect(message.fingerprint == 0xC07D_4C96)
    }

    @Test func sampleIPv6Response() throws {
        let message = try STUNMessage(decoding: RFC5769.ipv6Response)
        #expect(message.messageClass == .successResponse)
        #expect(message.transactionID.bytes == RFC5769.transactionID)
        #expect(try message.software == "test vector")
        let address = STUNAddress(.ipv6(0x2001_0DB8_1234_5678_0011_2233_4455_6677), port: 32853)
        #expect(try message.xorMappedAddress == address)
        #expect(try message.xorMappedAddress?.description == "[2001:db8:1234:5678:11:2233:4455:6677]:32853")
        #expect(message.fingerprint == 0xC8FB_0B4C)
    }

    @Test func sampleRequestWithLongTermCredentials() throws {
        let message = try STUNMessage(decoding: RFC5769.requestWithLongTermCredentials)
        #expect(message.messageClass == .request)
        #expect(message.transactionID.description == "78ad3433c6ad72c029da412e")
        #expect(try message.username == "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}")
        #expect(try message.nonce == "f//499k954d6OL34oL9FSTvy64sA")
        #expect(try message.realm == "example.org")
        #expect(try message.messageIntegrity?.count == 20)
        #expect(message.fingerprint == nil)
    }

    /// Our encoder pads with zeros where the vectors pad with spaces, so the bytes differ, but
    /// what the vectors say survives a round trip, and our FINGERPRINT verifies.
    @Test func vectorsSurviveReencoding() throws {
        for vector in [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response] {
            let message = try STUNMessage(decoding: vector)
            let again = try STUNMessage(decoding: message.encoded())
            #expect(again.attributes.dropLast() == message.attributes.dropLast())
            #expect(again.fingerprint != nil)
            #expect(again.encoded().count == vector.count)
        }
    }

    @Test func aChangedByteBreaksTheFingerprint() {
        for vector in [RFC5769.request, RFC5769.ipv4Response, RFC5769.ipv6Response] {
            for index in [8, 30, vector.count - 1] {
                var changed = vector
                changed[index] ^= 0x01
                #expect(throws: STUNDecodingError.badFingerprint) { try STUNMessage(decoding: changed) }
            }
        }
    }
}
