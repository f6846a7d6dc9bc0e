import Foundation

/// What is compared on a record, computed once (names folded, nicknames resolved, phonetic keys,
/// birthday parts, address tokens) and kept beside it. Only the record is encoded: the rest is
/// derived again when decoded, so stored features never go stale when the rules change.
public struct MatchFeatures: Hashable, Sendable, Codable {
    public var record: PersonRecord {
        didSet { derived = DerivedFeatures(record) }
    }
    var derived: DerivedFeatures

    public init(_ record: PersonRecord) {
        self.record = record
        derived = DerivedFeatures(record)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(try container.decode(PersonRecord.self, forKey: .record))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(record, forKey: .record)
    }

    enum CodingKeys: String, CodingKey { case record }

    public static func == (a: MatchFeatures, b: MatchFeatures) -> Bool { a.record == b.record }
    public func hash(into hasher: inout Hasher) { hasher.combine(record) }

    /// The first name as matched: folded words (`Smith, John` in one field gives `john`).
    public var foldedFirstName: String? { derived.first?.folded }
    /// The last name as matched, folded.
    public var foldedLastName: String? { derived.last?.folded }
    /// Double Metaphone keys of the first name (of its first word).
    public var firstNameKeys: (primary: String, alternate: String)? {
        derived.first.map { ($0.primaryKey, $0.alternateKey) }
    }
    /// Double Metaphone keys of the last name.
    public var lastNameKeys: (primary: String, alternate: String)? { derived.last.map { ($0.primaryKey, $0.alternateKey) } }
}

/// A birthday's parts; any may be missing (`--MM-DD` has no year).
struct BirthDate: Sendable, Equatable {
    var year: Int?
    var month: Int?
    var day: Int?

    /// Reads `YYYY`, `YYYY-MM`, `YYYY-MM-DD` and `--MM-DD`; anything else is no birthday.
    init?(_ text: String?) {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        func number(_ part: Substring, digits: Int, range: ClosedRange<Int>) -> Int? {
            guard part.count == digits, let value = Int(part), range.contains(value) else { return nil }
            return value
        }
        if text.hasPrefix("--") {
            guard parts.count == 4, let month = number(parts[2], digits: 2, range: 1...12),
                let day = number(parts[3], digits: 2, range: 1...31)
            else { return nil }
            (self.month, self.day) = (month, day)
            return
        }
        guard (1...3).contains(parts.count), let year = number(parts[0], digits: 4, range: 1...9999) else { return nil }
        self.year = year
        if parts.count >= 2 {
            guard let month = number(parts[1], digits: 2, range: 1...12) else { return nil }
            self.month = month
        }
        if parts.count == 3 {
            guard let day = number(parts[2], digits: 2, range: 1...31) else { return nil }
            self.day = day
        }
    }

    var isComplete: Bool { year != nil && month != nil && day != nil }
}

/// A postal address as a set of words, with abbreviations spelled out and street types dropped.
final class PhysicalFeature: Sendable {
    /// Hashes of the words, sorted and unique: compared on every candidate pair, so integers.
    let tokens: [Int]
    /// The same words as scalars, in the order of `tokens`, for the pairs that differ by typos.
    let words: [[UInt32]]
    /// The house number: the first number of the first part (before a comma), so that a postal
    /// code later on is not taken for it.
    let number: String?
    /// The last number of four or more digits after the first part: in most countries the postal code.
    let postalCode: String?
    let street: String?
    /// The street line (the first part) without numbers, words joined: `macgregorstreet`, so that
    /// a space typed in the wrong place (`macgregors treet`) changes nothing.
    let streetLine: [UInt32]
    /// The street line without street types (`macgregor`): `St` against `Place` is a typo as often
    /// as another street.
    let streetCore: [UInt32]
    /// Each later part (a second line, a suburb or town, a region) without numbers, words joined.
    let localityParts: [[UInt32]]
    let removed: Bool
    let verified: Bool

    init?(_ address: MatchAddress) {
        let parts = address.value.split(separator: ",").map { Self.words(NameFolding.fold(String($0))) }
        let all = parts.flatMap { $0 }
        guard !all.isEmpty else { return nil }
        let kept = Dictionary(
            all.filter { !Self.streetTypes.contains($0) }.map { ($0.hashValue, $0) }, uniquingKeysWith: { a, _ in a })
        tokens = kept.keys.sorted()
        words = tokens.map { Array(kept[$0]!.unicodeScalars.map(\.value)) }
        let isNumber = { (word: String) in word.first?.isNumber == true }
        // Counted in all words: the house number is among the first three words of the first part.
        let firstPart = parts.firstIndex { !$0.isEmpty } ?? 0
        let offset = parts[..<firstPart].reduce(0) { $0 + $1.count }
        let numberIndex = parts[firstPart].prefix(3).firstIndex(where: isNumber).map { $0 + offset }
        number = numberIndex.map { all[$0] }
        postalCode = all.indices.last { $0 != numberIndex && isNumber(all[$0]) && all[$0].count >= 4 }.map { all[$0] }
        street = all.first { $0.first?.isLetter == true && !Self.streetTypes.contains($0) }
        let letters = { (words: [String]) in words.filter { $0.first?.isNumber != true } }
        let streetWords = letters(parts[firstPart])
        streetLine = streetWords.joined().unicodeScalars.map(\.value)
        streetCore = streetWords.filter { !Self.streetTypes.contains($0) }.joined().unicodeScalars.map(\.value)
        localityParts = parts.dropFirst(firstPart + 1).map { letters($0).joined().unicodeScalars.map(\.value) }
            .filter { !$0.isEmpty }
        removed = address.removed
        verified = address.verified
    }

    /// Folded words with abbreviations spelled out, and a street type run into the word before it
    /// (`gurnaiplace`) split off.
    private static func words(_ folded: String) -> [String] {
        var result: [String] = []
        for raw in folded.split(separator: " ") {
            let word = spelledOut[String(raw)] ?? String(raw)
            if word.count >= 8, word.first?.isLetter == true,
                let type = runOnTypes.first(where: { word.hasSuffix($0) && word.count - $0.count >= 3 })
            {
                result.append(String(word.dropLast(type.count)))
                result.append(type)
            } else {
                result.append(word)
            }
        }
        return result
    }

    private static let spelledOut: [String: String] = [
        "st": "street", "str": "street", "rd": "road", "ave": "avenue", "av": "avenue", "blvd": "boulevard",
        "dr": "drive", "ln": "lane", "ct": "court", "pl": "place", "sq": "square", "hwy": "highway", "apt": "apartment",
        "ste": "suite", "n": "north", "s": "south", "e": "east", "w": "west", "mt": "mount", "no": "number",
        "cres": "crescent", "cct": "circuit", "cl": "close", "pde": "parade", "tce": "terrace", "cir": "circle",
        "strasse": "street", "rue": "street", "calle": "street", "via": "street",
    ]
    private static let streetTypes: Set<String> = [
        "street", "road", "avenue", "boulevard", "drive", "lane", "court", "place", "square", "highway", "apartment",
        "suite", "north", "south", "east", "west", "the", "number", "flat", "unit", "crescent", "circuit", "close",
        "parade", "terrace", "circle", "way",
    ]
    /// Street types long enough to be recognised at the end of a word they were run into.
    private static let runOnTypes = [
        "street", "road", "avenue", "drive", "lane", "court", "place", "crescent", "circuit",
        "close", "parade", "terrace",
    ]
}

/// One address other than a physical one: its value, and for phones the last seven digits.
final class AddressFeature: Sendable {
    let type: String
    let value: String
    let removed: Bool
    let verified: Bool
    /// Phones: the last seven digits; e-mail: the local part.
    let part: String?
    let scalars: [UInt32]

    init(type: String, value: String, removed: Bool, verified: Bool, part: String?) {
        (self.type, self.value, self.removed, self.verified, self.part) = (type, value, removed, verified, part)
        scalars = type == "email" || type == "phone" ? value.unicodeScalars.map(\.value) : []
    }
}

/// A class, so that comparing two records costs one reference count each, not one per field.
final class DerivedFeatures: Sendable {
    let first: NameFeature?
    let last: NameFeature?
    let birthday: BirthDate?
    let location: [UInt32]?
    let locationText: String?
    let physical: [PhysicalFeature]
    let emails: [AddressFeature]
    let phones: [AddressFeature]
    let systems: [AddressFeature]
    let handles: [AddressFeature]
    let gender: String?

    init(_ record: PersonRecord) {
        let (firstWords, lastWords) = NameOrder.split(first: record.firstName, last: record.lastName)
        first = NameFeature(words: firstWords, given: true)
        last = NameFeature(words: lastWords, given: false)
        birthday = BirthDate(record.birthday)
        let location = record.location.map(NameFolding.fold).flatMap { $0.isEmpty ? nil : $0 }
        locationText = location
        self.location = location.map { $0.unicodeScalars.map(\.value) }
        var physical: [PhysicalFeature] = []
        var emails: [AddressFeature] = []
        var phones: [AddressFeature] = []
        var systems: [AddressFeature] = []
        var handles: [AddressFeature] = []
        for address in record.addresses where !address.value.isEmpty {
            switch address.type {
            case "physical": if let feature = PhysicalFeature(address) { physical.append(feature) }
            case "email":
                let local = address.value.split(separator: "@").first.map(String.init)
                emails.append(
                    .init(type: "email", value: address.value, removed: address.removed, verified: address.verified, part: local))
            case "phone":
                let digits = address.value.filter(\.isNumber)
                phones.append(
                    .init(
                        type: "phone", value: address.value, removed: address.removed, verified: address.verified,
                        part: String(digits.suffix(7))))
            case "system":
                systems.append(
                    .init(type: "system", value: address.value, removed: address.removed, verified: address.verified, part: nil))
            default:
                handles.append(
                    .init(
                        type: address.type, value: address.value, removed: address.removed, verified: address.verified, part: nil)
                )
            }
        }
        (self.physical, self.emails, self.phones, self.systems, self.handles) = (physical, emails, phones, systems, handles)
        gender = Self.gender(record.gender)
    }

    static func gender(_ text: String?) -> String? {
        guard let folded = text.map(NameFolding.fold), !folded.isEmpty else { return nil }
        switch folded {
        case "m", "male", "man", "masculine", "h", "homme", "mann": return "m"
        case "f", "female", "woman", "feminine", "femme", "frau", "w": return "f"
        default: return folded
        }
    }
}
