import Foundation

/// One address of a record, already normalised (see ``AddressNormalizer``).
public struct MatchAddress: Hashable, Sendable, Codable {
    public var type: String
    public var value: String
    public var verified: Bool
    /// Marked removed by its owner: kept, but weighted down.
    public var removed: Bool

    public init(type: String, value: String, verified: Bool = false, removed: Bool = false) {
        self.type = type
        self.value = value
        self.verified = verified
        self.removed = removed
    }

    /// `type:value`, the way addresses are written in URLs and blocking keys.
    public var key: String { "\(type):\(value)" }
}

/// A person record as the matcher sees it: names as given, addresses normalised.
public struct PersonRecord: Hashable, Sendable, Codable {
    public var firstName: String?
    public var lastName: String?
    public var addresses: [MatchAddress]
    /// `YYYY`, `YYYY-MM`, `YYYY-MM-DD` or `--MM-DD`.
    public var birthday: String?
    public var location: String?
    public var gender: String?

    public init(
        firstName: String? = nil, lastName: String? = nil, addresses: [MatchAddress] = [], birthday: String? = nil,
        location: String? = nil, gender: String? = nil
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.addresses = addresses
        self.birthday = birthday
        self.location = location
        self.gender = gender
    }

    /// The addresses of one type, in the record's order.
    public func addresses(ofType type: String) -> [MatchAddress] { addresses.filter { $0.type == type } }
}

/// Why an address or a field could not be normalised, in words for an API error.
public struct NormalizationError: Error, Equatable, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}
