import Foundation
import LayerModels
import NIOCore

/// Writes an `Encodable` value as JSON straight into bytes, in one pass, in the order the value
/// encodes its keys; the wire format of every response and WebSocket packet.
///
/// Foundation's `JSONEncoder` first builds a tree of boxed values and then serializes it, sorting
/// every object's keys: a first sync of a user in 1,500 conversations spent most of the server's
/// time there. This encoder keeps no tree: a keyed container writes `{` when it is made and each
/// value as it comes, and a container is closed when the value that made it is done, or when
/// its parent writes its next element. Dictionaries with string keys are written with their keys
/// sorted, so that the same value always gives the same bytes. Dates are `LayerTimestamp`s, data
/// is base64, URLs are their absolute strings, and whole doubles are written without a fraction,
/// as `JSONEncoder` writes them. The encoder does not track coding paths (`codingPath` is always
/// empty): nothing the suite encodes reads them, and keeping them cost an array per value.
public enum StreamingJSONEncoder {
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let sink = JSONSink()
        try sink.write(value, depth: 0)
        sink.close(above: -1)
        return sink.bytes
    }

    public static func data(_ value: some Encodable) throws -> Data {
        Data(try encode(value))
    }

    public static func string(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }
}

/// The bytes written so far and the containers still open, innermost last.
private final class JSONSink {
    private struct State {
        var bytes: [UInt8] = []
        var open: [(depth: Int, close: UInt8, hasElements: Bool)] = []
    }

    /// The state lives behind a pointer the sink owns: a class's stored `var`s are checked for
    /// exclusive access at run time on every use, which took a tenth of the time of a first sync
    /// (every byte appended is such a use). The sink is never shared between threads.
    private let state: UnsafeMutablePointer<State>

    var bytes: [UInt8] {
        _read { yield state.pointee.bytes }
        _modify { yield &state.pointee.bytes }
    }

    /// Each open container: the depth of the encoder that made it, its closing byte, and whether
    /// it has an element yet.
    var open: [(depth: Int, close: UInt8, hasElements: Bool)] {
        _read { yield state.pointee.open }
        _modify { yield &state.pointee.open }
    }

    init() {
        state = .allocate(capacity: 1)
        state.initialize(to: State())
        state.pointee.bytes.reserveCapacity(4096)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Closes the containers made deeper than `depth`.
    func close(above depth: Int) {
        while let last = open.last, last.depth > depth {
            bytes.append(last.close)
            open.removeLast()
        }
    }

    /// Opens a container for an encoder at `depth`, or finds the one it already opened there (a
    /// value may ask for its keyed container more than once, to encode a part of itself first).
    func container(at depth: Int, open opening: UInt8, close closing: UInt8) {
        close(above: depth)
        if let last = open.last, last.depth == depth, last.close == closing { return }
        bytes.append(opening)
        open.append((depth, closing, false))
    }

    /// Starts the next element of the container at `depth`: closes what its last element left
    /// open and writes the comma.
    func nextElement(at depth: Int) {
        close(above: depth)
        guard let index = open.indices.last, open[index].depth == depth else { return }
        if open[index].hasElements { bytes.append(UInt8(ascii: ",")) }
        open[index].hasElements = true
    }

    func key(_ key: some CodingKey, at depth: Int) {
        nextElement(at: depth)
        writeString(key.stringValue)
        bytes.append(UInt8(ascii: ":"))
    }

    // MARK: Values

    /// Writes one value that an encoder at `depth - 1` encodes: a scalar directly, anything else
    /// through its own `encode(to:)` with an encoder at `depth`.
    func write<T: Encodable>(_ value: T, depth: Int) throws {
        // Metatype comparisons first: casting every value down a list of types costs more than
        // writing it.
        if T.self == String.self {
            writeString(unsafeBitCast(value, to: String.self))
        } else if T.self == Int.self {
            writeInteger(unsafeBitCast(value, to: Int.self))
        } else if T.self == Int64.self {
            writeInteger(unsafeBitCast(value, to: Int64.self))
        } else if T.self == Bool.self {
            writeLiteral(unsafeBitCast(value, to: Bool.self) ? "true" : "false")
        } else if T.self == Double.self {
            try writeDouble(unsafeBitCast(value, to: Double.self))
        } else if T.self == Date.self {
            writeString(LayerTimestamp.string(unsafeBitCast(value, to: Date.self)))
        } else if T.self == JSONValue.self {
            try writeJSON(value as! JSONValue)
        } else {
            switch value {
            case let value as any BinaryInteger: writeInteger(value)
            case let value as Float: try writeDouble(Double(value))
            case let value as URL: writeString(value.absoluteString)
            case let value as Data: writeString(value.base64EncodedString())
            case let value as Decimal: bytes.append(contentsOf: value.description.utf8)
            case let value as any StringKeyedDictionary: try value.writeSorted(into: self, depth: depth)
            default:
                let mark = bytes.count
                try value.encode(to: StreamingEncoder(sink: self, depth: depth))
                close(above: depth - 1)
                // A value that encodes nothing is an empty object, as `JSONEncoder` writes it.
                if bytes.count == mark { writeLiteral("{}") }
            }
        }
    }

    /// A `JSONValue` without the `Encoder` protocol's round trips; objects with sorted keys.
    func writeJSON(_ value: JSONValue) throws {
        switch value {
        case .null: writeLiteral("null")
        case .bool(let flag): writeLiteral(flag ? "true" : "false")
        case .number(let number):
            // As `JSONValue.encode(to:)` writes numbers: whole ones as integers.
            if number.rounded() == number, abs(number) < 1e15 { writeInteger(Int64(number)) } else { try writeDouble(number) }
        case .string(let text): writeString(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try writeJSON(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                try writeJSON(members[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    func writeLiteral(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    func writeInteger(_ value: some BinaryInteger) {
        guard let small = Int64(exactly: value) else {
            bytes.append(contentsOf: String(value).utf8)
            return
        }
        if small < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = small.magnitude
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[index...])
        }
    }

    func writeDouble(_ value: Double) throws {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(value) has no JSON representation."))
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): writeLiteral("\\\"")
                case UInt8(ascii: "\\"): writeLiteral("\\\\")
                case 0x0A: writeLiteral("\\n")
                case 0x0D: writeLiteral("\\r")
                case 0x09: writeLiteral("\\t")
                case 0x08: writeLiteral("\\b")
                case 0x0C: writeLiteral("\\f")
                default:
                    writeLiteral("\\u00")
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// `[String: Value]`, which the sink writes with its keys sorted.
private protocol StringKeyedDictionary {
    func writeSorted(into sink: JSONSink, depth: Int) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func writeSorted(into sink: JSONSink, depth: Int) throws {
        sink.bytes.append(UInt8(ascii: "{"))
        for (index, key) in keys.sorted().enumerated() {
            if index > 0 { sink.bytes.append(UInt8(ascii: ",")) }
            sink.writeString(key)
            sink.bytes.append(UInt8(ascii: ":"))
            try sink.write(self[key]!, depth: depth + 1)
        }
        sink.bytes.append(UInt8(ascii: "}"))
    }
}

private struct SuperKey: CodingKey {
    var stringValue: String { "super" }
    var intValue: Int? { nil }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
}

// MARK: The Encoder protocol

private struct StreamingEncoder: Encoder {
    let sink: JSONSink
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        sink.container(at: depth, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"))
        return KeyedEncodingContainer(KeyedContainer<Key>(sink: sink, depth: depth))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.container(at: depth, open: UInt8(ascii: "["), close: UInt8(ascii: "]"))
        return UnkeyedContainer(sink: sink, depth: depth)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(sink: sink, depth: depth)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: JSONSink
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        sink.key(key, at: depth)
        sink.writeLiteral("null")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        sink.key(key, at: depth)
        try sink.write(value, depth: depth + 1)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        sink.key(key, at: depth)
        return StreamingEncoder(sink: sink, depth: depth + 1).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        sink.key(key, at: depth)
        return StreamingEncoder(sink: sink, depth: depth + 1).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        sink.key(SuperKey(), at: depth)
        return StreamingEncoder(sink: sink, depth: depth + 1)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        sink.key(key, at: depth)
        return StreamingEncoder(sink: sink, depth: depth + 1)
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let sink: JSONSink
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    private(set) var count = 0

    init(sink: JSONSink, depth: Int) {
        self.sink = sink
        self.depth = depth
    }

    private mutating func next() {
        sink.nextElement(at: depth)
        count += 1
    }

    mutating func encodeNil() throws {
        next()
        sink.writeLiteral("null")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        next()
        try sink.write(value, depth: depth + 1)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next()
        return StreamingEncoder(sink: sink, depth: depth + 1).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        next()
        return StreamingEncoder(sink: sink, depth: depth + 1).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        next()
        return StreamingEncoder(sink: sink, depth: depth + 1)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let sink: JSONSink
    let depth: Int
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws { sink.writeLiteral("null") }

    mutating func encode<T: Encodable>(_ value: T) throws {
        // The value stands in for the one that asked for this container: same depth.
        try sink.write(value, depth: depth)
    }
}
