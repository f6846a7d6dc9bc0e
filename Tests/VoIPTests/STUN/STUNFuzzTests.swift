import Foundation
import LayerModels
import Testing

@testable import STUNCodec

/// Every file of `Corpus/` and thousands of seeded mutations of them go through the decoder and
/// the answer function, which must not crash and must answer only what DESIGN section 7 says.
@Suite struct STUNFuzzTests {
    static let corpus: [(name: String, bytes: [UInt8])] = {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".bin") }.sorted().compactMap { name in
            (try? Data(contentsOf: directory.appendingPathComponent(name))).map { (name, [UInt8]($0)) }
        }
    }()

    let responder = STUNResponder()
    let sender = STUNAddress(.ipv6(0x2001_0DB8_0000_0000_0000_0000_0000_0007), port: 61_000)

    @Test func corpusHoldsEveryKindOfInput() {
        #expect(Self.corpus.count >= 25)
        let answered = Self.corpus.filter { responder.answer(to: $0.bytes, from: sender) != nil }.map(\.name)
        #expect(
            answered.sorted() == [
                "binding-request-call-token.bin", "binding-request-fingerprint.bin", "binding-request.bin",
                "ipv6-mapped-address-request.bin", "many-unknown-attributes.bin", "message-integrity-then-unknown.bin",
                "rfc5769-long-term-request.bin", "rfc5769-request.bin", "unknown-attributes.bin",
            ])
    }

    @Test func corpusFilesKeepTheRules() {
        for (name, bytes) in Self.corpus {
            check(bytes, name)
        }
    }

    @Test func seededMutationsKeepTheRules() {
        var random = SplitMix64(seed: 0x5354_554E)
        var answered = 0
        for round in 0..<5000 {
            let seed = Self.corpus[Int(random.next() % UInt64(Self.corpus.count))]
            let mutated = mutate(seed.bytes, with: &random)
            if check(mutated, "round \(round) from \(seed.name): \(mutated)") { answered += 1 }
        }
        // The mutations reach the answering paths, not only the refusals.
        #expect(answered > 250)
    }

    /// Checks the invariants on one input; whether it was answered.
    @discardableResult
    func check(_ bytes: [UInt8], _ context: String) -> Bool {
        let request = try? STUNMessage(decoding: bytes)
        guard let answer = responder.answer(to: bytes, from: sender) else {
            let isBindingRequest = request?.messageClass == .request && request?.method == .binding
            #expect(!isBindingRequest, "a well-formed Binding request got no answer: \(context)")
            return false
        }
        guard let request, let response = try? STUNMessage(decoding: answer) else {
            Issue.record("an answer to bytes that do not decode, or one that does not decode itself: \(context)")
            return true
        }
        #expect(request.messageClass == .request && request.method == .binding, "\(context)")
        #expect(response.transactionID == request.transactionID && response.method == .binding, "\(context)")
        #expect(response.fingerprint != nil, "\(context)")
        let unknown = Self.unknownTypes(request)
        if unknown.isEmpty {
            #expect(response.messageClass == .successResponse, "\(context)")
            #expect((try? response.xorMappedAddress) == sender, "\(context)")
        } else {
            #expect(response.messageClass == .errorResponse, "\(context)")
            #expect((try? response.errorCode)?.code == 420, "\(context)")
            #expect((try? response.unknownAttributes)?.first == unknown.first, "\(context)")
        }
        return true
    }

    /// The comprehension-required types before MESSAGE-INTEGRITY that RFC 8489 and ICE do not
    /// define: an independent statement of what the server must refuse.
    static func unknownTypes(_ message: STUNMessage) -> [STUNAttributeType] {
        let known: Set<UInt16> = [
            0x0001, 0x0006, 0x0008, 0x0009, 0x000A, 0x0014, 0x0015, 0x001C, 0x001D, 0x001E, 0x0020, 0x0024, 0x0025,
        ]
        let checked = message.attributes.prefix { $0.type.rawValue != 0x0008 && $0.type.rawValue != 0x001C }
        return checked.map(\.type).filter { $0.rawValue < 0x8000 && !known.contains($0.rawValue) }
    }

    /// One to three edits of `bytes`: bit flips, a cut, a new header or attribute length, random
    /// bytes in or at the end, an attribute of another corpus file spliced in; then, half of the
    /// time, the header length and a final FINGERPRINT made right again, so that edits get past
    /// the first checks.
    func mutate(_ bytes: [UInt8], with random: inout SplitMix64) -> [UInt8] {
        var bytes = bytes
        for _ in 0...Int(random.next() % 3) {
            switch random.next() % 7 {
            case 0 where !bytes.isEmpty:
                for _ in 0...Int(random.next() % 4) {
                    bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1) << (random.next() % 8)
                }
            case 1:
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            case 2 where bytes.count >= 4:
                let length =
                    random.next() % 2 == 0 ? Int(random.next() % 0x10000) : max(0, bytes.count - 20 + Int(random.next() % 9) - 4)
                bytes[2] = UInt8(truncatingIfNeeded: length >> 8)
                bytes[3] = UInt8(truncatingIfNeeded: length)
            case 3:
                if let offset = attributeOffsets(bytes).randomElement(using: &random) {
                    let length = random.next() % 2 == 0 ? UInt16(truncatingIfNeeded: random.next()) : UInt16(random.next() % 24)
                    bytes[offset + 2] = UInt8(length >> 8)
                    bytes[offset + 3] = UInt8(length & 0xFF)
                }
            case 4 where !bytes.isEmpty:
                let at = Int(random.next() % UInt64(bytes.count))
                bytes[at] = UInt8(truncatingIfNeeded: random.next())
            case 5:
                bytes += (0..<Int(random.next() % 12)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            default:
                let donor = Self.corpus[Int(random.next() % UInt64(Self.corpus.count))].bytes
                let donorOffsets = attributeOffsets(donor)
                if let from = donorOffsets.randomElement(using: &random) {
                    let length = 4 + paddedLength(Int(donor[from + 2]) << 8 | Int(donor[from + 3]))
                    let piece = donor[from..<min(donor.count, from + length)]
                    let at = attributeOffsets(bytes).randomElement(using: &random) ?? min(bytes.count, 20)
                    bytes.insert(contentsOf: piece, at: at)
                }
            }
        }
        if random.next() % 2 == 0 { repair(&bytes) }
        return bytes
    }

    /// Where the attributes of `bytes` start, as far as their lengths can be followed.
    func attributeOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = 20
        while offset + 4 <= bytes.count {
            offsets.append(offset)
            offset += 4 + paddedLength(Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
        }
        return offsets
    }

    /// Sets the header's length to what follows it and recomputes a FINGERPRINT in the last
    /// eight bytes, if one is there.
    func repair(_ bytes: inout [UInt8]) {
        guard bytes.count >= 20 else { return }
        bytes[2] = UInt8(truncatingIfNeeded: (bytes.count - 20) >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: bytes.count - 20)
        let end = bytes.count - 8
        guard end >= 20, bytes[end] == 0x80, bytes[end + 1] == 0x28 else { return }
        let crc = bytes.withUnsafeBytes { CRC32.fingerprint(UnsafeRawBufferPointer(rebasing: $0[..<end])) }
        for index in 0..<4 { bytes[end + 4 + index] = UInt8(truncatingIfNeeded: crc >> (8 * (3 - index))) }
    }
}
