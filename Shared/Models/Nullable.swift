/// An optional attribute of an API object that is written as `null` when it has no value, rather
/// than left out: the objects keep one shape whatever they hold, as the original API's did.
/// Wrap the property (`@Nullable var avatarURL: String?`) and let `Encodable` be synthesized.
@propertyWrapper
public struct Nullable<Value: Encodable & Sendable>: Encodable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension Nullable: Equatable where Value: Equatable {}
