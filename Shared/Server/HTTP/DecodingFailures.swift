import Foundation
import LayerModels
import NIOCore
import NIOFoundationCompat

extension APIError {
    /// The error for a body that Foundation's `JSONDecoder` refused as "not valid JSON" although
    /// it is valid JSON: a number that does not fit the property's type (`2.5` or `1e20` where an
    /// integer belongs) is reported that way, at the top of the document, without the property.
    /// Finds the number at fault by putting 0 in its place and decoding again, and names it; nil
    /// when the body really is not JSON, or the cause is something else.
    static func misfitNumber<T: Decodable>(
        _ type: T.Type, in buffer: ByteBuffer, decoder: JSONDecoder, under prefix: [String] = []
    ) -> APIError? {
        guard let document = try? decoder.decode(JSONValue.self, from: buffer) else { return nil }
        var suspects: [[String]] = []
        collectSuspects(document, at: [], into: &suspects)
        guard !suspects.isEmpty, suspects.count <= 64 else { return nil }

        func failsAtTheTop(keeping kept: [String]?) -> Bool {
            var patched = document
            for suspect in suspects where suspect != kept { patched = patched.replacing(at: suspect[...], with: .number(0)) }
            guard let data = try? JSONEncoder().encode(patched) else { return false }
            do {
                _ = try decoder.decode(T.self, from: data)
                return false
            } catch DecodingError.dataCorrupted(let context) {
                return context.codingPath.isEmpty
            } catch {
                return false
            }
        }
        // With every suspect at 0 the failure must go away, or it lies elsewhere.
        guard !failsAtTheTop(keeping: nil) else { return nil }
        for suspect in suspects where failsAtTheTop(keeping: suspect) {
            let property = (prefix + suspect).joined(separator: ".")
            return APIError.invalid(property, "The property '\(property)' must be an integer of at most 64 bits.")
        }
        return nil
    }

    /// Numbers that no integer property takes: fractions and magnitudes beyond 64 bits.
    private static func collectSuspects(_ value: JSONValue, at path: [String], into suspects: inout [[String]]) {
        switch value {
        case .number(let number) where number.rounded() != number || abs(number) >= 9.2e18:
            suspects.append(path)
        case .array(let items):
            for (index, item) in items.enumerated() { collectSuspects(item, at: path + [String(index)], into: &suspects) }
        case .object(let members):
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                collectSuspects(member, at: path + [key], into: &suspects)
            }
        default: break
        }
    }
}

extension JSONValue {
    /// Decodes a part of a body that was first read as a `JSONValue`: a value that does not fit is
    /// the API's 4xx naming the property by its full path, `property` (such as `operations.3.parts`)
    /// followed by the path inside this value.
    public func decode<T: Decodable>(_ type: T.Type, property: String) throws -> T {
        let data = try StreamingJSONEncoder.data(self)
        do {
            return try LayerJSONDecoder.make().decode(T.self, from: data)
        } catch let error as DecodingError {
            let prefix = property.split(separator: ".").map(String.init)
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
                let misfit = APIError.misfitNumber(
                    T.self, in: ByteBuffer(data: data), decoder: LayerJSONDecoder.make(), under: prefix)
            {
                throw misfit
            }
            throw APIError(decoding: error.under(prefix))
        }
    }

    fileprivate func replacing(at path: ArraySlice<String>, with replacement: JSONValue) -> JSONValue {
        guard let first = path.first else { return replacement }
        switch self {
        case .object(var members):
            members[first] = members[first]?.replacing(at: path.dropFirst(), with: replacement)
            return .object(members)
        case .array(var items):
            guard let index = Int(first), items.indices.contains(index) else { return self }
            items[index] = items[index].replacing(at: path.dropFirst(), with: replacement)
            return .array(items)
        default:
            return self
        }
    }
}

extension DecodingError {
    /// The same error with `prefix`, the path of the enclosing value, before its coding path.
    func under(_ prefix: [String]) -> DecodingError {
        func moved(_ context: Context) -> Context {
            Context(
                codingPath: prefix.map { PathKey(stringValue: $0) } + context.codingPath,
                debugDescription: context.debugDescription,
                underlyingError: context.underlyingError)
        }
        switch self {
        case .keyNotFound(let key, let context): return .keyNotFound(key, moved(context))
        case .valueNotFound(let type, let context): return .valueNotFound(type, moved(context))
        case .typeMismatch(let type, let context): return .typeMismatch(type, moved(context))
        case .dataCorrupted(let context): return .dataCorrupted(moved(context))
        @unknown default: return self
        }
    }

    private struct PathKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
