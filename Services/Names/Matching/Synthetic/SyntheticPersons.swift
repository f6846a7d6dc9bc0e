import Foundation

/// Generated records with the entity each belongs to, for measuring and tuning the matcher.
public struct SyntheticDataset: Sendable {
    public var records: [PersonRecord]
    /// The true person behind each record: records with one id are duplicates of each other.
    public var entityIDs: [Int]

    public var features: [MatchFeatures] { records.map(MatchFeatures.init) }
}

/// A seeded, deterministic generator of person records with duplicates that carry the errors real
/// contact data has: typos, nicknames, missing fields, first and last name swapped, phones written
/// nationally or internationally, partial or garbled birthdays, moves, new e-mail addresses. It also
/// makes hard non-matches: namesakes (a common name, another person) and relatives (same surname
/// and home, sometimes the same home phone or birthday).
public struct SyntheticPersons: Sendable {
    public var seed: UInt64
    /// Share of people who appear more than once.
    public var duplicatedShare: Double = 0.45
    /// Share of people who are a namesake of someone else, and share who are a relative.
    public var namesakeShare: Double = 0.06
    public var relativeShare: Double = 0.06

    public init(seed: UInt64) { self.seed = seed }

    /// About `count` records (exactly `count`), shuffled.
    public func generate(records count: Int) -> SyntheticDataset {
        var random = SplitMix64(seed: seed)
        var people = PeopleFactory()
        var records: [PersonRecord] = []
        var entities: [Int] = []
        var entity = 0
        var earlier: [SyntheticPerson] = []
        while records.count < count {
            let kind = random.unit()
            let person: SyntheticPerson
            if kind < namesakeShare, let other = earlier.randomElement(using: &random) {
                person = people.namesake(of: other, &random)
            } else if kind < namesakeShare + relativeShare, let other = earlier.randomElement(using: &random) {
                person = people.relative(of: other, &random)
            } else {
                person = people.person(&random)
            }
            if earlier.count < 5000 { earlier.append(person) } else { earlier[random.int(0...4999)] = person }
            var copies = 1
            if random.chance(duplicatedShare) { copies = 2 + (random.chance(0.35) ? 1 : 0) + (random.chance(0.12) ? 1 : 0) }
            for _ in 0..<min(copies, count - records.count) {
                records.append(Observation.record(of: person, &random))
                entities.append(entity)
            }
            entity += 1
        }
        // Shuffle so that duplicates are not neighbours.
        var order = Array(records.indices)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, random.int(0...i)) }
        return SyntheticDataset(records: order.map { records[$0] }, entityIDs: order.map { entities[$0] })
    }
}

/// The truth about one generated person.
struct SyntheticPerson: Sendable {
    var first: String
    var last: String
    var female: Bool
    var year: Int
    var month: Int
    var day: Int
    var region: String
    var city: String
    var streetNumber: Int
    var street: String
    var emails: [String]
    var phones: [String]  // national significant numbers of `region`
    var handle: String?
    var system: String?
}

/// Makes people with unique e-mail addresses, handles and phones.
struct PeopleFactory {
    private var taken = Set<String>()
    private var nextUser = 1

    mutating func person(_ random: inout SplitMix64) -> SyntheticPerson {
        let female = random.chance(0.5)
        let cyrillic = random.chance(0.02)
        let first: String
        let last: String
        if cyrillic {
            (first, last) = (
                SyntheticLists.cyrillicFirstNames.draw(&random), SyntheticLists.cyrillicLastNames.draw(&random)
            )
        } else {
            first = (female ? SyntheticLists.femaleNames : SyntheticLists.maleNames).draw(&random)
            last =
                random.chance(0.35)
                ? random.pick(SyntheticLists.surnameHeads) + random.pick(SyntheticLists.surnameTails)
                : SyntheticLists.lastNames.draw(&random)
        }
        let region = SyntheticLists.regions[random.pick(cumulative: SyntheticLists.regionWeights)]
        var person = SyntheticPerson(
            first: first, last: last, female: female, year: random.int(1940...2006), month: random.int(1...12),
            day: random.int(1...28), region: region,
            city: random.chance(0.5)
                ? random.pick(SyntheticLists.surnameHeads) + random.pick(SyntheticLists.townTails)
                : SyntheticLists.cities[region]!.draw(&random),
            streetNumber: random.int(1...400),
            street: SyntheticLists.streets.draw(&random) + " "
                + random.pick(SyntheticLists.streetTypes), emails: [], phones: [])
        fillAddresses(&person, &random)
        return person
    }

    /// Someone else with the same name.
    mutating func namesake(of other: SyntheticPerson, _ random: inout SplitMix64) -> SyntheticPerson {
        var person = person(&random)
        (person.first, person.last, person.female) = (other.first, other.last, other.female)
        person.emails = []
        person.phones = []
        fillAddresses(&person, &random)
        return person
    }

    /// A relative living with `other`: same surname and home, sometimes the home phone, rarely
    /// (twins) the birthday.
    mutating func relative(of other: SyntheticPerson, _ random: inout SplitMix64) -> SyntheticPerson {
        var person = person(&random)
        person.last = other.last
        (person.region, person.city, person.streetNumber, person.street) = (
            other.region, other.city, other.streetNumber, other.street
        )
        person.emails = []
        person.phones = []
        fillAddresses(&person, &random)
        if random.chance(0.2), let phone = other.phones.first { person.phones.append(phone) }
        if random.chance(0.03) { (person.year, person.month, person.day) = (other.year, other.month, other.day) }
        return person
    }

    private mutating func fillAddresses(_ person: inout SyntheticPerson, _ random: inout SplitMix64) {
        for _ in 0..<(random.chance(0.3) ? 2 : 1) { person.emails.append(uniqueEmail(person, &random)) }
        for _ in 0..<(random.chance(0.25) ? 2 : 1) { person.phones.append(uniquePhone(person.region, &random)) }
        if random.chance(0.3) {
            person.handle = unique(Observation.ascii(person.first + person.last) + String(random.int(1...99)))
        }
        if random.chance(0.2) {
            person.system = "user-\(nextUser)"
            nextUser += 1
        }
    }

    private mutating func unique(_ candidate: String) -> String {
        var value = candidate
        var suffix = 2
        while !taken.insert(value).inserted {
            value = candidate + String(suffix)
            suffix += 1
        }
        return value
    }

    private mutating func uniqueEmail(_ person: SyntheticPerson, _ random: inout SplitMix64) -> String {
        let first = Observation.ascii(person.first)
        let last = Observation.ascii(person.last)
        let (f, l) = (first.isEmpty ? "user" : first, last.isEmpty ? "mail" : last)
        let local: String
        switch random.int(0...5) {
        case 0: local = "\(f).\(l)"
        case 1: local = "\(f.prefix(1))\(l)"
        case 2: local = "\(f)\(l)"
        case 3: local = "\(f)_\(l)\(random.int(1...99))"
        case 4: local = "\(l).\(f)"
        default: local = "\(f)\(random.int(50...99))"
        }
        let domain = SyntheticLists.emailDomains.draw(&random)
        return unique(local) + "@" + domain
    }

    private mutating func uniquePhone(_ region: String, _ random: inout SplitMix64) -> String {
        while true {
            let phone = Self.nationalNumber(region, &random)
            if taken.insert(region + phone).inserted { return phone }
        }
    }

    static func digits(_ count: Int, _ random: inout SplitMix64) -> String {
        String((0..<count).map { _ in Character(String(random.int(0...9))) })
    }

    static func nationalNumber(_ region: String, _ random: inout SplitMix64) -> String {
        switch region {
        case "US": "\(random.int(201...989))\(random.int(200...999))" + digits(4, &random)
        case "GB": "7" + digits(9, &random)
        case "DE": "17" + String(random.int(0...9)) + digits(8, &random)
        case "FR": String(random.int(6...7)) + digits(8, &random)
        case "IN": String(random.int(7...9)) + digits(9, &random)
        default: "4" + digits(8, &random)
        }
    }
}
