import Testing

@testable import STUNCodec

@Suite struct STUNMessageTests {
    /// The header of a message of `type` with `attributes` (their bytes), no FINGERPRINT.
    static func bytes(type: UInt16, attributes: [UInt8] = [], length: Int? = nil) -> [UInt8] {
        let length = length ?? attributes.count
        return [UInt8(type >> 8), UInt8(type & 0xFF), UInt8(length >> 8), UInt8(length & 0xFF), 0x21, 0x12, 0xA4, 0x42]
            + RFC5769.transactionID + attributes
    }

    @Test func classAndMethodBitsInterleave() {
        #expect(STUNMessageType.make(.request, .binding) == 0x0001)
        #expect(STUNMessageType.make(.indication, .binding) == 0x0011)
        #expect(STUNMessageType.make(.successResponse, .binding) == 0x0101)
        #expect(STUNMessageType.make(.errorResponse, .binding) == 0x0111)
        // TURN's Allocate (0x003) and the largest method, whose bits straddle both class bits.
        let allocate = STUNMethod(rawValue: 0x003)!
        #expect(STUNMessageType.make(.errorResponse, allocate) == 0x0113)
        let largest = STUNMethod(rawValue: 0xFFF)!
        #expect(STUNMessageType.make(.request, largest) == 0x3EEF)
        #expect(STUNMethod(rawValue: 0x1000) == nil)
        for messageClass in STUNClass.allCases {
            for method in [STUNMethod.binding, allocate, largest] {
                let split = STUNMessageType.split(STUNMessageType.make(messageClass, method))
                #expect(split.0 == messageClass && split.1 == method)
            }
        }
    }

    @Test func headerIsTwentyBytesThenPaddedAttributes() throws {
        let id = try #require(STUNTransactionID(bytes: RFC5769.transactionID))
        let message = STUNMessage(.request, .binding, transactionID: id, attributes: [.software("abcde")])
        let bytes = message.encoded(fingerprint: false)
        #expect(bytes == Self.bytes(type: 0x0001, attributes: [0x80, 0x22, 0x00, 0x05, 0x61, 0x62, 0x63, 0x64, 0x65, 0, 0, 0]))
    }

    @Test func everyAttributeRoundTrips() throws {
        let id = STUNTransactionID.random()
        let ipv4 = STUNAddress(.ipv4(0x7F00_0001), port: 54321)
        let ipv6 = STUNAddress(.ipv6(0xFE80_0000_0000_0000_0000_0000_0000_0001), port: 1)
        let message = STUNMessage(
            .errorResponse, .binding, transactionID: id,
            attributes: [
                .xorMappedAddress(ipv6, transactionID: id), .mappedAddress(ipv4), .username("alice"), .realm("layer"),
                .nonce("token-1"), .software("Layerline STUN"), .errorCode(.unknownAttribute),
                .unknownAttributes([STUNAttributeType(rawValue: 0x0003), STUNAttributeType(rawValue: 0x7FFF)]),
                STUNAttribute(type: .messageIntegrity, value: Array(repeating: 7, count: 20)),
            ])
        let decoded = try STUNMessage(decoding: message.encoded())
        #expect(decoded.messageClass == .errorResponse)
        #expect(decoded.transactionID == id)
        #expect(Array(decoded.attributes.dropLast()) == message.attributes)
        #expect(try decoded.xorMappedAddress == ipv6)
        #expect(try decoded.mappedAddress == ipv4)
        #expect(try decoded.username == "alice")
        #expect(try decoded.realm == "layer")
        #expect(try decoded.nonce == "token-1")
        #expect(try decoded.software == "Layerline STUN")
        #expect(try decoded.errorCode == .unknownAttribute)
        #expect(try decoded.unknownAttributes?.map(\.rawValue) == [0x0003, 0x7FFF])
        #expect(try decoded.messageIntegrity == Array(repeating: 7, count: 20))
        #expect(decoded.fingerprint != nil)
    }

    @Test func xorMappedAddressIsXoredOnTheWire() throws {
        let id = try #require(STUNTransactionID(bytes: RFC5769.transactionID))
        let attribute = STUNAttribute.xorMappedAddress(STUNAddress(.ipv4(0xC000_0201), port: 32853), transactionID: id)
        // As in RFC 5769's IPv4 response.
        #expect(attribute.value == [0x00, 0x01, 0xA1, 0x47, 0xE1, 0x12, 0xA6, 0x43])
        #expect(
            STUNAttribute.mappedAddress(STUNAddress(.ipv4(0xC000_0201), port: 32853)).value == [0, 1, 0x80, 0x55, 192, 0, 2, 1])
    }

    @Test func fingerprintIsCRC32XorSTUN() {
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBytes { CRC32.checksum($0) } == 0xCBF4_3926)
        #expect(check.withUnsafeBytes { CRC32.fingerprint($0) } == 0xCBF4_3926 ^ 0x5354_554E)
    }

    @Test func malformedBytesThrowTheirReason() {
        let cases: [([UInt8], STUNDecodingError)] = [
            ([], .tooShort),
            (Array(RFC5769.request.prefix(19)), .tooShort),
            ([0x80] + Self.bytes(type: 0x0001).dropFirst(), .notSTUN),
            (Self.bytes(type: 0x0001).enumerated().map { $0.offset == 4 ? 0x00 : $0.element }, .notSTUN),
            (Self.bytes(type: 0x0001, length: 4), .badLength),
            (Self.bytes(type: 0x0001, attributes: [0x80, 0x22, 0x00, 0x01, 0x61, 0, 0], length: 7), .badLength),
            (Self.bytes(type: 0x0001, attributes: [0x80, 0x22, 0x00, 0x05, 0x61, 0x62, 0x63, 0x64]), .truncatedAttribute),
            (Self.bytes(type: 0x0001, attributes: [0x80, 0x22, 0xFF, 0xFF, 0x61, 0x62, 0x63, 0x64]), .truncatedAttribute),
            (
                Self.bytes(type: 0x0001, attributes: [0x80, 0x28, 0x00, 0x04, 0, 0, 0, 0, 0x80, 0x22, 0, 0]),
                .misplacedFingerprint
            ),
            (Self.bytes(type: 0x0001, attributes: [0x80, 0x28, 0x00, 0x04, 0, 0, 0, 0]), .badFingerprint),
            (Self.bytes(type: 0x0001, attributes: [0x80, 0x28, 0x00, 0x00]), .malformedAttribute(.fingerprint)),
        ]
        for (bytes, reason) in cases {
            #expect(throws: reason, "\(bytes)") { try STUNMessage(decoding: bytes) }
        }
    }

    @Test func malformedValuesThrowFromTheirAccessor() throws {
        func message(_ attribute: STUNAttribute) throws -> STUNMessage {
            try STUNMessage(decoding: STUNMessage(.successResponse, .binding, attributes: [attribute]).encoded())
        }
        let shortAddress = try message(STUNAttribute(type: .xorMappedAddress, value: [0, 1, 0, 0]))
        #expect(throws: STUNDecodingError.malformedAttribute(.xorMappedAddress)) { try shortAddress.xorMappedAddress }
        let wrongFamily = try message(STUNAttribute(type: .mappedAddress, value: [0, 2, 0, 1, 1, 2, 3, 4]))
        #expect(throws: STUNDecodingError.malformedAttribute(.mappedAddress)) { try wrongFamily.mappedAddress }
        let badUTF8 = try message(STUNAttribute(type: .username, value: [0xC3, 0x28]))
        #expect(throws: STUNDecodingError.malformedAttribute(.username)) { try badUTF8.username }
        let longNonce = try message(STUNAttribute(type: .nonce, value: Array(repeating: 0x61, count: 764)))
        #expect(throws: STUNDecodingError.malformedAttribute(.nonce)) { try longNonce.nonce }
        let badClass = try message(STUNAttribute(type: .errorCode, value: [0, 0, 7, 0]))
        #expect(throws: STUNDecodingError.malformedAttribute(.errorCode)) { try badClass.errorCode }
        let oddList = try message(STUNAttribute(type: .unknownAttributes, value: [0, 3, 0]))
        #expect(throws: STUNDecodingError.malformedAttribute(.unknownAttributes)) { try oddList.unknownAttributes }
        let shortIntegrity = try message(STUNAttribute(type: .messageIntegrity, value: [1, 2, 3]))
        #expect(throws: STUNDecodingError.malformedAttribute(.messageIntegrity)) { try shortIntegrity.messageIntegrity }
        #expect(try shortIntegrity.username == nil)
    }

    @Test func addressesPrintAsPeopleWriteThem() {
        #expect(STUNAddress(.ipv4(0x7F00_0001), port: 3478).description == "127.0.0.1:3478")
        #expect(STUNAddress(.ipv6(1), port: 3478).description == "[::1]:3478")
        #expect(STUNAddress(.ipv6(0), port: 1).description == "[::]:1")
        #expect(STUNAddress(.ipv6(0x2001_0DB8_0000_0000_0001_0000_0000_0001), port: 1).description == "[2001:db8::1:0:0:1]:1")
        #expect(STUNAddress(.ipv6(0x0000_0000_0000_0000_0000_FFFF_7F00_0001), port: 9).unmappingIPv4.description == "127.0.0.1:9")
        #expect(STUNAddress(.ipv6(1), port: 9).unmappingIPv4 == STUNAddress(.ipv6(1), port: 9))
    }
}
