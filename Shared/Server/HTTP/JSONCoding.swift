import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import NIOCore
import NIOFoundationCompat

/// Timestamps on the wire: ISO-8601 UTC with fractional seconds.
public enum LayerTimestamp {
    /// `2026-11-22T14:11:33.123Z`. Written by hand: responses with thousands of timestamps (a
    /// changelog catch-up) spent much of their time in the general-purpose formatter.
    public static func string(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let whole = interval.rounded(.down)
        var seconds = time_t(whole)
        let milliseconds = min(999, Int(((interval - whole) * 1000).rounded(.down)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes = [UInt8]()
        bytes.reserveCapacity(24)
        func append(_ value: Int, digits: Int) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        append(Int(parts.tm_year) + 1900, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mon) + 1, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(Int(parts.tm_mday), digits: 2)
        bytes.append(UInt8(ascii: "T"))
        append(Int(parts.tm_hour), digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(Int(parts.tm_min), digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(Int(parts.tm_sec), digits: 2)
        bytes.append(UInt8(ascii: "."))
        append(milliseconds, digits: 3)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func date(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

/// Responses of routes that return an `Encodable`, in the wire format of ``StreamingJSONEncoder``.
public struct LayerJSONEncoder: ResponseEncoder {
    public init() {}

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        let buffer = try ByteBuffer.json(value)
        return Response(
            status: .ok,
            headers: [.contentType: MediaType.json],
            body: .init(byteBuffer: buffer)
        )
    }
}

public struct LayerJSONDecoder: RequestDecoder {
    public init() {}

    public static func make() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = LayerTimestamp.date(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO-8601 timestamp")
            }
            return date
        }
        return decoder
    }

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return try Self.make().decode(T.self, from: buffer)
    }
}

extension Request {
    /// Decodes a JSON body of at most `limit` bytes, turning every way it can be wrong into a
    /// 4xx in the API's error shape that names the offending property.
    public func decodeJSON<T: Decodable>(
        _ type: T.Type, limit: Int = 64 * 1024, allowedKeys: Set<String>? = nil
    ) async throws -> T {
        try Self.decodeJSON(type, from: try await jsonBody(limit: limit), allowedKeys: allowedKeys)
    }

    /// The bytes of a body that must be there, at most `limit` of them (413 beyond).
    public func jsonBody(limit: Int) async throws -> ByteBuffer {
        let buffer: ByteBuffer
        do {
            buffer = try await self.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.requestTooLarge, "The request body is larger than \(limit) bytes.")
        }
        guard buffer.readableBytes > 0 else {
            throw APIError(.invalidRequest, "The request needs a JSON body.")
        }
        return buffer
    }

    /// Decodes a JSON body already in hand; an unknown top-level key (when `allowedKeys` is
    /// given) or a bad value is a 4xx naming the property.
    public static func decodeJSON<T: Decodable>(
        _ type: T.Type, from buffer: ByteBuffer, allowedKeys: Set<String>? = nil
    ) throws -> T {
        do {
            let decoder = LayerJSONDecoder.make()
            if let allowedKeys, let keys = try? decoder.decode(TopLevelKeys.self, from: buffer).keys,
                let unknown = keys.sorted().first(where: { !allowedKeys.contains($0) })
            {
                throw APIError.invalid(unknown, "'\(unknown)' is not a property of this request.")
            }
            return try decoder.decode(T.self, from: buffer)
        } catch let error as DecodingError {
            throw APIError(decoding: error, of: T.self, from: buffer)
        }
    }
}

/// The property names of a JSON object, for refusing unknown ones.
private struct TopLevelKeys: Decodable {
    var keys: [String]

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
    }
}

extension APIError {
    /// Maps a `DecodingError` to `missing_property`, `invalid_property` or `invalid_request`: a
    /// body that is no JSON (or `null`) is a bad request (400); JSON of the wrong kind at the top,
    /// an array where an object belongs, is `invalid_property` naming `body` (422).
    public init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            (codingPath + (last.map { [$0] } ?? [])).map { key in
                key.intValue.map { String($0) } ?? key.stringValue
            }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let property = path(context.codingPath, key)
            self.init(.missingProperty, "The property '\(property)' is required.", property: property)
        case .valueNotFound(_, let context):
            let property = path(context.codingPath)
            if property.isEmpty {
                self.init(.invalidRequest, "The request body must not be null.")
            } else {
                self.init(.invalidProperty, "The property '\(property)' must not be null.", property: property)
            }
        case .typeMismatch(let type, let context):
            let property = path(context.codingPath)
            if property.isEmpty {
                // Valid JSON of the wrong kind (`[]` where an object belongs): a bad value of the
                // body as a whole, as the original answered it.
                let kind = String(describing: type).hasPrefix("Array") || type == [Any].self ? "array" : "object"
                self.init(.invalidProperty, "The request body must be a JSON \(kind).", property: "body")
            } else {
                self.init(.invalidProperty, "The property '\(property)' has the wrong type.", property: property)
            }
        case .dataCorrupted(let context):
            let property = path(context.codingPath)
            if property.isEmpty {
                self.init(.invalidRequest, "The request body is not valid JSON.")
            } else {
                self.init(
                    .invalidProperty, "The property '\(property)' is invalid: \(context.debugDescription)",
                    property: property)
            }
        @unknown default:
            self.init(.invalidRequest, "The request body could not be read.")
        }
    }
}

extension APIError {
    /// Like ``init(decoding:)``, with the body at hand to name the number at fault when Foundation
    /// calls valid JSON invalid (see ``misfitNumber(_:in:decoder:)``).
    init<T: Decodable>(decoding error: DecodingError, of type: T.Type, from buffer: ByteBuffer) {
        if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
            let misfit = Self.misfitNumber(type, in: buffer, decoder: LayerJSONDecoder.make())
        {
            self = misfit
        } else {
            self.init(decoding: error)
        }
    }
}

extension ByteBuffer {
    /// The JSON encoding of `value` in the suite's wire format.
    public static func json(_ value: some Encodable) throws -> ByteBuffer {
        ByteBuffer(bytes: try StreamingJSONEncoder.encode(value))
    }
}

extension Request {
    /// Like ``decodeJSON(_:limit:)``, but an empty body is nil rather than an error.
    public func decodeOptionalJSON<T: Decodable>(_ type: T.Type, limit: Int = 64 * 1024) async throws -> T? {
        var request = self
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError(.requestTooLarge, "The request body is larger than \(limit) bytes.")
        }
        guard buffer.readableBytes > 0 else { return nil }
        do {
            return try LayerJSONDecoder.make().decode(T.self, from: buffer)
        } catch let error as DecodingError {
            throw APIError(decoding: error, of: T.self, from: buffer)
        }
    }
}

extension JSONValue {
    /// Compact JSON text, for binding to a `jsonb` parameter.
    public var jsonText: String {
        String(decoding: (try? StreamingJSONEncoder.data(self)) ?? Data("null".utf8), as: UTF8.self)
    }
}
