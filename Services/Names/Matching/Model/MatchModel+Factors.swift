extension MatchModel {
    /// What the model weighs: the two names graded jointly, then every other field of
    /// ``MatchField`` on its own. The names are joined because they are far from independent among
    /// non-matches: blocking makes most candidate pairs share one of the names, so that sharing
    /// both is much rarer than the product of sharing each, and weighing them apart makes a pair
    /// with both names equal look weaker than it is.
    public static let factors = [
        "name", "birthday", "location", "house_number", "street", "postal_code", "locality", "email", "phone", "system",
        "handle", "gender", "home of relatives", "phone of relatives",
    ]

    /// The fields weighed on their own, in ``factors`` order after the names. A physical address is
    /// weighed by its parts, not as a whole.
    static let factorFields: [MatchField] = [
        .birthday, .location, .house, .street, .postalCode, .locality, .email, .phone, .system, .handle, .gender,
    ]

    /// The fields a household shares, weighed apart for pairs whose names could be relatives': the
    /// home as one factor (``homeLevels``), the phone as another.
    static let householdFields: [MatchField] = [.location, .house, .street, .postalCode, .locality, .phone]
    static let householdFieldSet = Set(householdFields)

    /// The levels of the home of possible relatives, strongest first. One factor, not one per part:
    /// relatives who share a home share its number, street, postal code and town all at once, so
    /// that weighing each part as independent evidence would count one fact four times.
    public static let homeLevels = [
        "same house (number and street, the town not different)", "same street, the town not different",
        "same town (postal code, locality or location alike)", "different",
    ]

    /// Levels per factor (level 0, missing, not counted).
    public static let factorLevelCounts =
        [nameLevels.count] + factorFields.map(\.levelCount) + [homeLevels.count, MatchField.phone.levelCount]

    /// The joint name levels, strongest first.
    public static let nameLevels = [
        "both names the same, one of them not common", "both names the same and common",
        "both names agree (nickname, one name within the other)", "one name agrees, the other a typo apart",
        "one name agrees, the other only alike", "both names alike",
        "first name agrees, last name differs (a married name)", "last name agrees, first name differs (a relative)",
        "one name alike, the other differs", "only the first names can be compared, they agree",
        "only the last names can be compared, they agree", "only one name can be compared, it is alike", "names differ",
    ]

    /// The name levels of possible relatives: same family name and another first name, or no first
    /// name to tell. People of one household share their home and landline, so for such pairs those
    /// have weights of their own: `u` measured on random pairs with such names (in a
    /// store of families many of them share a home, so a shared home says little; in a store
    /// without relatives, where a first name that differs is a typing error or a replaced value,
    /// it says as much as for any pair), `m` estimated by EM like the others.
    static let relativeNameLevels: Set<Int> = [8, 11]
    static let relativeLevelFlags: UInt64 = (1 << 8) | (1 << 11)

    /// The level of each factor for a comparison (0: missing).
    static func factorLevels(_ comparison: Comparison) -> [Int] {
        let name = nameLevel(first: Int(comparison[.firstName]), last: Int(comparison[.lastName]))
        let relatives = relativeNameLevels.contains(name)
        var levels = [name]
        for field in factorFields {
            levels.append(relatives && householdFieldSet.contains(field) ? 0 : Int(comparison[field]))
        }
        levels.append(relatives ? homeLevel(comparison) : 0)
        levels.append(relatives ? Int(comparison[.phone]) : 0)
        return levels
    }

    /// The level of the home (``homeLevels``) from the levels of the address's parts and the
    /// location (0: none of them compared). A house or a street counts only where the town does not
    /// disagree (one street name is found in many towns); the town counts where the postal code,
    /// the locality or the location agrees or is a typo apart.
    static func homeLevel(_ comparison: Comparison) -> Int {
        let locality = comparison[.locality]
        let location = comparison[.location]
        let postalCode = comparison[.postalCode]
        // A postal code a typo apart counts; a locality with only some parts in common (the state) does not.
        let town = postalCode == 1 || postalCode == 2 || locality == 1 || locality == 2 || location == 1 || location == 2
        let otherTown = !town && (postalCode | locality | location) != 0
        let street = comparison[.street]
        if (street == 1 || street == 2) && !otherTown { return comparison[.house] == 1 ? 1 : 2 }
        if town { return 3 }
        return (comparison[.house] | street | postalCode | locality | location) == 0 ? 0 : 4
    }

    /// Joint name level from the two name levels (0 missing, 1 exact, 2 exact common, 3 agree,
    /// 4 similar, 5 alike, 6 different): a table of 7 × 7.
    static let nameTable: [Int] = {
        var table = [Int](repeating: 0, count: 49)
        for first in 0...6 {
            for last in 0...6 { table[first * 7 + last] = joint(first, last) }
        }
        return table
    }()

    static func nameLevel(first: Int, last: Int) -> Int { nameTable[first * 7 + last] }

    private static func joint(_ first: Int, _ last: Int) -> Int {
        let agrees = 1...3
        let alike = 4...5
        switch (first, last) {
        case (0, 0): return 0
        case (1, 1), (1, 2), (2, 1): return 1
        case (2, 2): return 2
        case (_, 0) where agrees.contains(first): return 10
        case (0, _) where agrees.contains(last): return 11
        case (0, _), (_, 0): return alike.contains(max(first, last)) ? 12 : 13
        default: break
        }
        let (strong, weak) = (min(first, last), max(first, last))
        if agrees.contains(strong) && agrees.contains(weak) { return 3 }
        if agrees.contains(strong) && weak == 4 { return 4 }
        if agrees.contains(strong) && weak == 5 { return 5 }
        if alike.contains(strong) && alike.contains(weak) { return 6 }
        if agrees.contains(first) && last == 6 { return 7 }
        if agrees.contains(last) && first == 6 { return 8 }
        if alike.contains(strong) { return 9 }
        return 13
    }
}
