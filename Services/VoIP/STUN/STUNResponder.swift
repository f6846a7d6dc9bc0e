/// What a STUN server answers to one datagram (RFC 8489 section 6.3), as a pure function: the
/// server of the VoIP service calls it for every datagram it receives, and tests call it directly.
///
/// - A Binding request gets a success response: XOR-MAPPED-ADDRESS (the sender's address),
///   SOFTWARE and FINGERPRINT.
/// - A Binding request with a comprehension-required attribute the server does not understand
///   gets a 420 error response: ERROR-CODE, UNKNOWN-ATTRIBUTES (the first 32 distinct types),
///   SOFTWARE and FINGERPRINT. The server understands the attributes of RFC 8489 and ICE's
///   PRIORITY and USE-CANDIDATE, and ignores them all, since it authenticates no one; it does
///   not understand CHANGE-REQUEST, so a client of RFC 5780 learns that it does not test NAT
///   behaviour, as that RFC intends. Attributes after MESSAGE-INTEGRITY are ignored, as RFC 8489
///   section 14.5 asks.
/// - Nothing else is answered: not bytes that fail ``STUNMessage/init(decoding:)`` (a malformed
///   message or a wrong FINGERPRINT), not indications or responses, and not requests of another
///   method, which RFC 8489 section 6.3 has an agent discard silently ("the method value is a
///   supported method ... If any errors are detected, the message is silently discarded").
///
/// It keeps no state: a retransmitted request gets the same answer again, which section 6.3.1
/// allows for Binding, an idempotent method.
public struct STUNResponder: Sendable {
    /// Unknown types listed in a 420 response: enough for any client, and a bound on its size.
    static let unknownListLimit = 32

    private let software: [UInt8]
    private let unknownAttributeError: [UInt8]
    /// The most bytes an answer takes: the room `answer(to:from:into:)` needs.
    public let maximumAnswerSize: Int

    /// `software` is what the SOFTWARE attribute of every answer says (at most 127 characters,
    /// as RFC 8489 section 14.14 allows).
    public init(software: String = "Layerline STUN") {
        precondition(software.count < 128, "SOFTWARE holds fewer than 128 characters")
        self.software = Array(software.utf8)
        unknownAttributeError = STUNAttribute.errorCode(.unknownAttribute).value
        let success = 4 + 20  // XOR-MAPPED-ADDRESS of an IPv6 address
        let failure = 4 + paddedLength(unknownAttributeError.count) + 4 + 2 * Self.unknownListLimit
        maximumAnswerSize = STUNMessage.headerSize + max(success, failure) + 4 + paddedLength(self.software.count) + 8
    }

    /// Writes the answer to `datagram`, received from `sender`, at the start of `output` (at least
    /// ``maximumAnswerSize`` bytes) and returns its size; nil when the datagram gets no answer.
    /// Nothing is allocated.
    public func answer(
        to datagram: UnsafeRawBufferPointer, from sender: STUNAddress, into output: UnsafeMutableRawBufferPointer
    ) -> Int? {
        guard output.count >= maximumAnswerSize, let request = try? STUNFrame(validating: datagram),
            request.messageClass == .request, request.method == .binding
        else { return nil }
        let cookieAndID = UnsafeRawBufferPointer(rebasing: datagram[4..<STUNMessage.headerSize])
        var writer = STUNWriter(output)
        var unknown = false
        forEachUnknownAttribute(of: request) { _ in unknown = true }
        if unknown {
            writer.header(STUNMessageType.make(.errorResponse, .binding), cookieAndID: cookieAndID)
            unknownAttributeError.withUnsafeBytes { writer.attribute(.errorCode, $0) }
            writeUnknownAttributes(of: request, into: &writer)
        } else {
            writer.header(STUNMessageType.make(.successResponse, .binding), cookieAndID: cookieAndID)
            writer.attributeHeader(.xorMappedAddress, length: sender.attributeLength)
            writer.address(sender, xor: request.transactionID.xorMask)
        }
        software.withUnsafeBytes { writer.attribute(.software, $0) }
        return writer.finish(fingerprint: true)
    }

    /// The answer to `datagram` from `sender` as bytes; nil when it gets none.
    public func answer(to datagram: [UInt8], from sender: STUNAddress) -> [UInt8]? {
        let answer = datagram.withUnsafeBytes { datagram in
            [UInt8](unsafeUninitializedCapacity: maximumAnswerSize) { buffer, count in
                count = self.answer(to: datagram, from: sender, into: UnsafeMutableRawBufferPointer(buffer)) ?? 0
            }
        }
        return answer.isEmpty ? nil : answer
    }

    /// UNKNOWN-ATTRIBUTES: each unknown type once, in the order of the request, up to the limit.
    private func writeUnknownAttributes(of request: STUNFrame, into writer: inout STUNWriter) {
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: Self.unknownListLimit) { list in
            var count = 0
            forEachUnknownAttribute(of: request) { type in
                if count < list.count, !list[..<count].contains(type.rawValue) {
                    list[count] = type.rawValue
                    count += 1
                }
            }
            writer.attributeHeader(.unknownAttributes, length: 2 * count)
            for type in list[..<count] { writer.write(type) }
            writer.pad()
        }
    }

    private func forEachUnknownAttribute(of request: STUNFrame, _ body: (STUNAttributeType) -> Void) {
        for (type, _) in request.attributes {
            if type == .messageIntegrity || type == .messageIntegritySHA256 { return }
            if type.isComprehensionRequired && !Self.understands(type) { body(type) }
        }
    }

    private static func understands(_ type: STUNAttributeType) -> Bool {
        switch type {
        case .mappedAddress, .username, .messageIntegrity, .errorCode, .unknownAttributes, .realm, .nonce,
            .messageIntegritySHA256, .passwordAlgorithm, .userhash, .xorMappedAddress, .priority, .useCandidate:
            true
        default:
            false
        }
    }
}
