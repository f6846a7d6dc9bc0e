import STUNCodec
import Testing

/// The rules of DESIGN section 7 for what the STUN server answers, on the pure function it uses.
@Suite struct STUNResponderTests {
    let responder = STUNResponder()
    let sender = STUNAddress(.ipv4(0xC633_6407), port: 40_000)

    func answer(_ request: STUNMessage, fingerprint: Bool = true) throws -> STUNMessage? {
        try responder.answer(to: request.encoded(fingerprint: fingerprint), from: sender).map { try STUNMessage(decoding: $0) }
    }

    @Test func bindingRequestGetsItsSenderAddress() throws {
        let request = STUNMessage(.request, .binding)
        let answer = try #require(try answer(request))
        #expect(answer.messageClass == .successResponse)
        #expect(answer.method == .binding)
        #expect(answer.transactionID == request.transactionID)
        #expect(answer.attributes.map(\.type) == [.xorMappedAddress, .software, .fingerprint])
        #expect(try answer.xorMappedAddress == sender)
        #expect(try answer.software == "Layerline STUN")
    }

    @Test func ipv6SendersAndRequestsWithoutFingerprintAreAnswered() throws {
        let sender = STUNAddress(.ipv6(0x2001_0DB8_0000_0000_0000_0000_0000_0042), port: 5)
        let bytes = STUNMessage(.request, .binding).encoded(fingerprint: false)
        let answer = try STUNMessage(decoding: try #require(responder.answer(to: bytes, from: sender)))
        #expect(try answer.xorMappedAddress == sender)
        #expect(answer.fingerprint != nil)
    }

    @Test func understoodAttributesAreIgnored() throws {
        let request = try STUNMessage(decoding: RFC5769.request)  // PRIORITY, USERNAME, MESSAGE-INTEGRITY…
        #expect(try answer(request)?.messageClass == .successResponse)
        let longTerm = try STUNMessage(decoding: RFC5769.requestWithLongTermCredentials)
        #expect(try answer(longTerm)?.messageClass == .successResponse)
        let optional = STUNMessage(.request, .binding, attributes: [STUNAttribute(type: .init(rawValue: 0xC001), value: [1])])
        #expect(try answer(optional)?.messageClass == .successResponse)
    }

    @Test func unknownComprehensionRequiredAttributesGet420() throws {
        let changeRequest = STUNAttribute(type: .init(rawValue: 0x0003), value: [0, 0, 0, 6])
        let other = STUNAttribute(type: .init(rawValue: 0x7FFF), value: [])
        let request = STUNMessage(.request, .binding, attributes: [changeRequest, .software("x"), other, changeRequest])
        let answer = try #require(try answer(request))
        #expect(answer.messageClass == .errorResponse)
        #expect(answer.method == .binding)
        #expect(answer.transactionID == request.transactionID)
        #expect(answer.attributes.map(\.type) == [.errorCode, .unknownAttributes, .software, .fingerprint])
        #expect(try answer.errorCode == STUNErrorCode(420, reason: "Unknown Attribute"))
        #expect(try answer.unknownAttributes?.map(\.rawValue) == [0x0003, 0x7FFF])
        #expect(try answer.xorMappedAddress == nil)
    }

    @Test func a420ListsAtMost32Types() throws {
        let unknown = (0x7000..<0x7040).map { STUNAttribute(type: .init(rawValue: UInt16($0)), value: []) }
        let answer = try #require(try answer(STUNMessage(.request, .binding, attributes: unknown)))
        #expect(try answer.unknownAttributes?.map(\.rawValue) == (0x7000..<0x7020).map { UInt16($0) })
    }

    @Test func attributesAfterMessageIntegrityAreIgnored() throws {
        let integrity = STUNAttribute(type: .messageIntegrity, value: Array(repeating: 0, count: 20))
        let unknown = STUNAttribute(type: .init(rawValue: 0x0003), value: [0, 0, 0, 0])
        let request = STUNMessage(.request, .binding, attributes: [integrity, unknown])
        #expect(try answer(request)?.messageClass == .successResponse)
    }

    @Test func indicationsAndResponsesGetNoAnswer() throws {
        for messageClass in [STUNClass.indication, .successResponse, .errorResponse] {
            #expect(try answer(STUNMessage(messageClass, .binding)) == nil)
        }
        #expect(responder.answer(to: RFC5769.ipv4Response, from: sender) == nil)
    }

    @Test func otherMethodsGetNoAnswer() throws {
        let allocate = try #require(STUNMethod(rawValue: 0x003))
        #expect(try answer(STUNMessage(.request, allocate)) == nil)
        #expect(try answer(STUNMessage(.request, try #require(STUNMethod(rawValue: 0xFFF)))) == nil)
    }

    @Test func aWrongFingerprintGetsNoAnswer() throws {
        var bytes = STUNMessage(.request, .binding).encoded()
        bytes[bytes.count - 1] ^= 0xFF
        #expect(responder.answer(to: bytes, from: sender) == nil)
        var request = RFC5769.request
        request[40] ^= 0x01  // inside PRIORITY: the message still parses, its CRC does not match
        #expect(responder.answer(to: request, from: sender) == nil)
    }

    @Test func malformedPacketsGetNoAnswer() {
        let valid = STUNMessage(.request, .binding).encoded(fingerprint: false)
        let packets: [[UInt8]] = [
            [], Array(valid.prefix(19)), valid + [0, 0, 0, 0], Array(repeating: 0, count: 20),
            [0x40] + valid.dropFirst(), Array("GET / HTTP/1.1\r\n\r\n".utf8),
        ]
        for packet in packets {
            #expect(responder.answer(to: packet, from: sender) == nil, "\(packet)")
        }
    }

    @Test func answerNeedsRoomForTheLargest() {
        let request = STUNMessage(.request, .binding).encoded()
        let small = [UInt8](unsafeUninitializedCapacity: 32) { buffer, count in
            count = request.withUnsafeBytes {
                responder.answer(to: $0, from: sender, into: UnsafeMutableRawBufferPointer(buffer)) ?? 0
            }
        }
        #expect(small.isEmpty)
        #expect(responder.maximumAnswerSize == 20 + 28 + 68 + 4 + 16 + 8)
    }
}
