import Foundation

// The public surface of NameMatching that the names service builds on. The implementations here
// are placeholders while the module is written; each is replaced by the real one.

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
}

/// Why an address or a field could not be normalised, in words for an API error.
public struct NormalizationError: Error, Equatable, Sendable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}

public enum AddressNormalizer {
    /// The normalised form of `value` for an address of `type`: E.164 for `phone` (national numbers
    /// read in `defaultRegion`, an ISO 3166 alpha-2 code), e-mail with a lower-cased domain,
    /// handles without `@` and lower-cased, `system` and `physical` trimmed. Throws when it cannot.
    public static func normalize(type: String, value: String, defaultRegion: String) throws(NormalizationError) -> String {
        value.trimmingCharacters(in: .whitespaces)
    }

    /// Whether `type` is an address type at all: a lower-case word.
    public static func isValidType(_ type: String) -> Bool { !type.isEmpty }

    /// Whether `region` is a region whose phone numbering is known.
    public static func isKnownRegion(_ region: String) -> Bool { true }
}

public enum DoubleMetaphone {
    /// The primary and alternate Double Metaphone keys of a name (the alternate equals the
    /// primary when there is none).
    public static func keys(_ name: String) -> (primary: String, alternate: String) { (name, name) }
}

/// What is compared on a record, computed once (names folded, nicknames resolved, phonetic keys,
/// birthday parts, address tokens) and stored beside it.
public struct MatchFeatures: Hashable, Sendable, Codable {
    public var record: PersonRecord
    public init(_ record: PersonRecord) { self.record = record }

    /// The blocking keys: two records become a candidate pair when they share one.
    public var blockingKeys: [String] { record.addresses.map { "\($0.type):\($0.value)" } }
}

/// How two records compare, field by field, as levels of agreement.
public struct Comparison: Hashable, Sendable, Codable {
    public var levels: [Int8]
    public init(levels: [Int8]) { self.levels = levels }

    public static func compare(_ a: MatchFeatures, _ b: MatchFeatures) -> Comparison { Comparison(levels: []) }

    /// Per field (`first_name`, `last_name`, `email`, `phone`, `birthday`, `location`, `physical`,
    /// `system`, `handle`, …): `exact`, `agree`, `similar`, `disagree` or absent when either side lacks it.
    public var evidence: [String: String] { [:] }

    /// An address both records hold that identifies one person (a verified one, or a `system` one).
    public var sharesStrongAddress: Bool { false }
}

/// Fellegi-Sunter m and u probabilities per field and level, and the prior share of matches
/// among candidate pairs.
public struct MatchModel: Hashable, Sendable, Codable {
    public init() {}

    /// Estimated offline on synthetic data; what an app starts with.
    public static let standard = MatchModel()

    /// Re-estimates the model from the comparisons of an app's candidate pairs with EM, starting
    /// from `self`.
    public func estimated(from comparisons: [Comparison]) -> MatchModel { self }

    /// The calibrated probability that a pair with this comparison is one person.
    public func probability(_ comparison: Comparison) -> Double { comparison.levels.isEmpty ? 0 : 0.5 }
}

/// A candidate pair, by index into the record lists it came from.
public struct ScoredPair: Hashable, Sendable {
    public var a: Int
    public var b: Int
    public var comparison: Comparison
    public var probability: Double
    public init(a: Int, b: Int, comparison: Comparison, probability: Double) {
        self.a = a
        self.b = b
        self.comparison = comparison
        self.probability = probability
    }
}

public struct Deduplicator: Sendable {
    public var model: MatchModel
    public init(model: MatchModel = .standard) { self.model = model }

    /// Every candidate pair inside `records` (`a < b`) at or above `minProbability`.
    public func pairs(in records: [MatchFeatures], minProbability: Double) -> [ScoredPair] { [] }

    /// Every candidate pair between `new` (`a`, index into `new`) and `existing` (`b`) at or above
    /// `minProbability`.
    public func pairs(between new: [MatchFeatures], and existing: [MatchFeatures], minProbability: Double) -> [ScoredPair] {
        []
    }
}
