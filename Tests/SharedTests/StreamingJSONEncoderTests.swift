import Foundation
import LayerModels
import LayerServer
import Testing

/// The wire encoder writes what Foundation's `JSONEncoder` would, value for value, in one pass.
@Suite struct StreamingJSONEncoderTests {
    /// Foundation's encoder in the suite's former wire format, to compare with.
    func foundation(_ value: some Encodable) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(LayerTimestamp.string(date))
        }
        return try JSONDecoder().decode(JSONValue.self, from: encoder.encode(value))
    }

    func streamed(_ value: some Encodable) throws -> String {
        try StreamingJSONEncoder.string(value)
    }

    struct Basic: Encodable {
        var id: String
        var name: String?
        var count: Int
        var ratio: Double
        var flag: Bool
        var tags: [String]
        var sentAt: Date
        var nested: [Basic]
        var small: Int8 = -3
        var big: UInt32 = 4_000_000_000

        enum CodingKeys: String, CodingKey {
            case id, name, count, ratio, flag, tags, nested, small, big
            case sentAt = "sent_at"
        }
    }

    /// Encodes a part of itself first, then asks for its container again (as `IdentityObject`).
    struct Extended: Encodable {
        var basic: Basic
        var extra: String

        enum Keys: String, CodingKey { case extra }

        func encode(to encoder: any Encoder) throws {
            try basic.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(extra, forKey: .extra)
        }
    }

    /// Nested containers and a super encoder, closed by the next key rather than by a value.
    struct Nesting: Encodable {
        enum Keys: String, CodingKey { case first, list, after, parent }
        enum Inner: String, CodingKey { case a, b }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var first = container.nestedContainer(keyedBy: Inner.self, forKey: .first)
            try first.encode(1, forKey: .a)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode("x")
            var inner = list.nestedContainer(keyedBy: Inner.self)
            try inner.encodeNil(forKey: .b)
            try list.encode(2.5)
            try container.encode([Int](), forKey: .after)
            try "parent".encode(to: container.superEncoder(forKey: .parent))
        }
    }

    struct Empty: Encodable {}

    enum Kind: String, Encodable { case text }

    @Test("Structs, optionals, arrays, dates, nested values and narrow integers come out as JSONEncoder writes them")
    func sameAsFoundation() throws {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123)
        let leaf = Basic(
            id: "leaf", name: nil, count: -7, ratio: 0.1, flag: false, tags: [], sentAt: date, nested: [])
        let value = Basic(
            id: "a/b", name: "Zoë \"quoted\" \\ back\nline\t\u{01}", count: 42, ratio: 3, flag: true, tags: ["x", "y"],
            sentAt: date, nested: [leaf, leaf])
        let values: [any Encodable] = [
            value, Extended(basic: value, extra: "more"), Nesting(), Empty(), [Empty()], Kind.text,
            ["b": JSONValue.number(1), "a": .array([.null, .bool(true), .string("s"), .number(1.5), .object([:])])],
            JSONValue.number(1e300), JSONValue.number(-0.000001), [String: Int](), Optional<Int>.none,
        ]
        for value in values {
            let text = try streamed(value)
            let parsed = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(parsed == (try foundation(value)), "\(text)")
        }
    }

    @Test("Keys in the order encoded, dictionaries sorted, strings escaped, whole doubles without a fraction")
    func exactBytes() throws {
        #expect(try streamed(["z": 1, "a": 2, "m": 3]) == #"{"a":2,"m":3,"z":1}"#)
        #expect(try streamed(Nesting()) == #"{"first":{"a":1},"list":["x",{"b":null},2.5],"after":[],"parent":"parent"}"#)
        #expect(try streamed("a/b\"c\\d\u{1F}é") == #""a/b\"c\\d\u001fé""#)
        #expect(try streamed([1.0, 0.5, -2.0, 1e21]) == "[1,0.5,-2,1e+21]")
        #expect(try streamed(Empty()) == "{}")
        #expect(try streamed([[Int]]()) == "[]")
        #expect(try streamed(JSONValue.object(["k": .object(["b": .null, "a": .number(2)])])) == #"{"k":{"a":2,"b":null}}"#)
    }

    @Test("A value JSON cannot hold is an error, not invalid output")
    func nonFinite() {
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder.encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder.encode(["x": Double.infinity]) }
    }
}
