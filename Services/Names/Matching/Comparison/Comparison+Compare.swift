extension Comparison {
    /// Grades every field of two records; see ``MatchField/levels`` for what each level means.
    public static func compare(_ a: MatchFeatures, _ b: MatchFeatures) -> Comparison { compare(a.derived, b.derived) }

    static func compare(_ x: DerivedFeatures, _ y: DerivedFeatures) -> Comparison {
        var result = Comparison(packed: 0)
        let (first, last) = FieldComparators.names(x, y)
        result[.firstName] = first
        result[.lastName] = last
        result[.birthday] = FieldComparators.birthday(x.birthday, y.birthday)
        result[.location] = FieldComparators.location(x.location, y.location)
        result[.physical] = FieldComparators.physical(x.physical, y.physical)
        FieldComparators.addressParts(x.physical, y.physical, into: &result)
        var strong = false
        result[.email] = FieldComparators.addresses(x.emails, y.emails, similar: FieldComparators.similarEmail, strong: &strong)
        result[.phone] = FieldComparators.addresses(x.phones, y.phones, similar: FieldComparators.similarPhone, strong: &strong)
        result[.system] = FieldComparators.addresses(x.systems, y.systems, similar: nil, strong: &strong)
        result[.handle] = FieldComparators.handles(x.handles, y.handles, strong: &strong)
        if let g = x.gender, let h = y.gender { result[.gender] = g == h ? 1 : 2 }
        return result.withStrongAddress(strong)
    }
}

enum FieldComparators {
    /// First and last name levels, read crosswise when that fits much better (first and last name
    /// swapped on one record).
    static func names(_ x: DerivedFeatures, _ y: DerivedFeatures) -> (Int8, Int8) {
        let first = name(x.first, y.first, given: true)
        let last = name(x.last, y.last, given: false)
        guard first > 3 || last > 3, let xf = x.first, let xl = x.last, let yf = y.first, let yl = y.last,
            // Swapped names keep their initials, even with a typo: a cheap test before two more comparisons.
            xf.scalars.first == yl.scalars.first || xl.scalars.first == yf.scalars.first
        else {
            return (first, last)
        }
        let crossFirst = name(xf, yl, given: false)
        let crossLast = name(xl, yf, given: false)
        if crossFirst <= 4 && crossLast <= 4 && rank(crossFirst) + rank(crossLast) < rank(first) + rank(last) {
            return (crossFirst, crossLast)
        }
        return (first, last)
    }

    /// Exact levels (1 and 2) rank alike when choosing between straight and crosswise readings.
    private static func rank(_ level: Int8) -> Int8 { level == 2 ? 1 : level }

    static func name(_ a: NameFeature?, _ b: NameFeature?, given: Bool) -> Int8 {
        guard let a, let b else { return 0 }
        if a.scalars == b.scalars { return a.common && b.common ? 2 : 1 }
        // The same name in two scripts (Иванов, Ivanov): transliteration is lossy, so not exact.
        if (a.latin != nil || b.latin != nil) && (a.latin ?? a.folded) == (b.latin ?? b.folded) { return 3 }
        if given && a.sharesFormalName(with: b) { return 3 }
        let (shorter, longer) = a.words.count <= b.words.count ? (a, b) : (b, a)
        if longer.words.count > 1 && shorter.words.allSatisfy({ longer.words.contains($0) }) { return 3 }
        if a.isInitial || b.isInitial { return a.scalars.first == b.scalars.first ? 5 : 6 }
        let similarity = StringSimilarity.jaroWinkler(a.scalars, b.scalars)
        let sounds = a.soundsLike(b)
        if similarity >= 0.92 || (sounds && similarity >= 0.8) { return 4 }
        // One edit apart keeps a Jaro-Winkler of 0.8 or more at these lengths: test that first.
        if similarity >= 0.8 && min(a.scalars.count, b.scalars.count) >= 4 && abs(a.scalars.count - b.scalars.count) <= 1
            && StringSimilarity.isWithinOneEdit(a.scalars, b.scalars)
        {
            return 4
        }
        if sounds || similarity >= 0.85 { return 5 }
        return 6
    }

    static func birthday(_ a: BirthDate?, _ b: BirthDate?) -> Int8 {
        guard let a, let b else { return 0 }
        if a.isComplete && b.isComplete {
            if a == b { return 1 }
            return similarDates(a, b) ? 4 : 5
        }
        // Partial dates compare on the parts both have.
        var shared = 0
        var differing = 0
        var yearDiffers = false
        if let x = a.year, let y = b.year {
            shared += 1
            if x != y {
                differing += 1
                yearDiffers = true
            }
        }
        if let x = a.month, let y = b.month {
            shared += 1
            if x != y { differing += 1 }
        }
        var monthAndDay = a.month != nil && b.month != nil
        if let x = a.day, let y = b.day {
            shared += 1
            if x != y { differing += 1 }
        } else {
            monthAndDay = false
        }
        if shared == 0 { return 0 }
        if differing > 0 {
            // A year typo next to a missing day still reads as similar.
            if differing == 1 && yearDiffers && oneDigitApart(a.year!, b.year!) { return 4 }
            return 5
        }
        return monthAndDay ? 2 : 3
    }

    static func similarDates(_ a: BirthDate, _ b: BirthDate) -> Bool {
        guard let ay = a.year, let am = a.month, let ad = a.day, let by = b.year, let bm = b.month, let bd = b.day else {
            return false
        }
        if ay == by && am == bd && ad == bm { return true }  // day and month swapped
        if ay == by && am == bm && oneDigitApart(ad, bd) { return true }
        if ay == by && ad == bd && oneDigitApart(am, bm) { return true }
        if am == bm && ad == bd && oneDigitApart(ay, by) { return true }
        return false
    }

    /// One decimal digit changed, or two neighbouring digits swapped (numbers of up to four digits).
    static func oneDigitApart(_ a: Int, _ b: Int) -> Bool {
        func digit(_ value: Int, _ index: Int) -> Int { (value / pow10[index]) % 10 }
        var differing = 0
        var first = -1
        var second = -1
        for index in 0..<4 where digit(a, index) != digit(b, index) {
            differing += 1
            if first < 0 { first = index } else { second = index }
        }
        if differing == 1 { return true }
        guard differing == 2, second == first + 1 else { return false }
        return digit(a, first) == digit(b, second) && digit(a, second) == digit(b, first)
    }

    private static let pow10 = [1, 10, 100, 1000]

    static func location(_ a: [UInt32]?, _ b: [UInt32]?) -> Int8 {
        guard let a, let b else { return 0 }
        if a == b { return 1 }
        return StringSimilarity.jaroWinkler(a, b) >= 0.9 ? 2 : 3
    }

    static func physical(_ a: [PhysicalFeature], _ b: [PhysicalFeature]) -> Int8 {
        guard !a.isEmpty, !b.isEmpty else { return 0 }
        var bestActive: Int8 = 5
        var bestAny: Int8 = 5
        for x in a {
            for y in b {
                let level = physicalPair(x, y)
                bestAny = min(bestAny, level)
                if !x.removed && !y.removed { bestActive = min(bestActive, level) }
            }
        }
        if bestActive > bestAny && bestAny <= 2 { return 4 }
        return bestActive
    }

    private static func physicalPair(_ x: PhysicalFeature, _ y: PhysicalFeature) -> Int8 {
        if x.tokens == y.tokens { return 1 }
        if x.tokens.isEmpty || y.tokens.isEmpty { return 5 }
        // Words in common: equal ones first (a merge of the sorted hashes), then, among the rest,
        // words a typo apart. Bit i of a mask marks word i as taken (addresses of more than 64
        // words compare on their first 64).
        var takenX: UInt64 = 0
        var takenY: UInt64 = 0
        var common = 0
        var i = 0
        var j = 0
        while i < x.tokens.count && j < y.tokens.count {
            if x.tokens[i] == y.tokens[j] {
                if i < 64 && j < 64 {
                    takenX |= 1 << UInt64(i)
                    takenY |= 1 << UInt64(j)
                }
                common += 1
                i += 1
                j += 1
            } else if x.tokens[i] < y.tokens[j] {
                i += 1
            } else {
                j += 1
            }
        }
        let smaller = min(x.tokens.count, y.tokens.count)
        if common < smaller {
            for i in 0..<min(x.words.count, 64) where takenX & (1 << UInt64(i)) == 0 && x.words[i].count >= 4 {
                for j in 0..<min(y.words.count, 64) where takenY & (1 << UInt64(j)) == 0 {
                    if similarWords(x.words[i], y.words[j]) {
                        takenX |= 1 << UInt64(i)
                        takenY |= 1 << UInt64(j)
                        common += 1
                        break
                    }
                }
            }
        }
        let overlap = Double(common) / Double(smaller)
        let sameNumber = x.number == nil || y.number == nil || x.number == y.number
        if overlap >= 0.75 && sameNumber { return 2 }
        // A house number alone in common is not an address in common.
        if overlap >= 0.5 && common >= 2 && (sameNumber || overlap >= 0.75) { return 3 }
        return 5
    }

    /// The parts of the two physical addresses in use (not marked removed) that are most alike:
    /// house number, street, postal code and the rest of the address, each graded on its own.
    static func addressParts(_ a: [PhysicalFeature], _ b: [PhysicalFeature], into result: inout Comparison) {
        var best: (x: PhysicalFeature, y: PhysicalFeature, level: Int8)?
        for x in a where !x.removed {
            for y in b where !y.removed {
                let level = a.count == 1 && b.count == 1 ? 0 : physicalPair(x, y)
                if best == nil || level < best!.level { best = (x, y, level) }
            }
        }
        guard let (x, y, _) = best else { return }
        if let p = x.number, let q = y.number { result[.house] = p == q ? 1 : 2 }
        result[.street] = street(x, y)
        if let p = x.postalCode, let q = y.postalCode {
            let (p, q) = (p.unicodeScalars.map(\.value), q.unicodeScalars.map(\.value))
            result[.postalCode] = p == q ? 1 : p.count == q.count && StringSimilarity.isWithinOneEdit(p, q) ? 2 : 3
        }
        result[.locality] = locality(x.localityParts, y.localityParts)
    }

    private static func street(_ x: PhysicalFeature, _ y: PhysicalFeature) -> Int8 {
        guard !x.streetLine.isEmpty, !y.streetLine.isEmpty else { return 0 }
        let cores = !x.streetCore.isEmpty && !y.streetCore.isEmpty
        if x.streetLine == y.streetLine || (cores && x.streetCore == y.streetCore) { return 1 }
        let similar =
            StringSimilarity.jaroWinkler(x.streetLine, y.streetLine) >= 0.9
            || (cores && StringSimilarity.jaroWinkler(x.streetCore, y.streetCore) >= 0.9)
        return similar ? 2 : 3
    }

    /// Each part of the shorter list against its best counterpart in the other: the same, a typo
    /// apart (Jaro-Winkler 0.9), or not found.
    private static func locality(_ a: [[UInt32]], _ b: [[UInt32]]) -> Int8 {
        guard !a.isEmpty, !b.isEmpty else { return 0 }
        let (shorter, longer) = a.count <= b.count ? (a, b) : (b, a)
        var same = 0
        var alike = 0
        for part in shorter {
            if longer.contains(part) {
                same += 1
            } else if longer.contains(where: { StringSimilarity.jaroWinkler(part, $0) >= 0.9 }) {
                alike += 1
            }
        }
        if same == shorter.count { return 1 }
        if same + alike == shorter.count { return 2 }
        return same + alike > 0 ? 3 : 4
    }

    /// Two words of an address a typo apart: four or more letters one edit apart, or a postal code
    /// with one digit wrong or two swapped. House numbers must be equal (16 and 18 are two houses).
    private static func similarWords(_ a: [UInt32], _ b: [UInt32]) -> Bool {
        guard b.count >= 4, let first = a.first, let other = b.first else { return false }
        let digits: ClosedRange<UInt32> = 0x30...0x39
        if digits.contains(first) != digits.contains(other) { return false }
        if digits.contains(first) && a.count != b.count { return false }
        return StringSimilarity.isWithinOneEdit(a, b)
    }

    /// Best level over all pairs of addresses of one kind: exact (1), exact only through an address
    /// marked removed (2), similar (3), different (the last level).
    static func addresses(
        _ a: [AddressFeature], _ b: [AddressFeature], similar: ((AddressFeature, AddressFeature) -> Bool)?,
        strong: inout Bool
    ) -> Int8 {
        guard !a.isEmpty, !b.isEmpty else { return 0 }
        let different: Int8 = similar == nil ? 3 : 4
        var best = different
        for x in a {
            for y in b {
                if x.value == y.value {
                    if x.type == "system" || (x.verified && y.verified) { strong = true }
                    best = min(best, x.removed || y.removed ? 2 : 1)
                } else if let similar, best > 3, similar(x, y) {
                    best = 3
                }
            }
        }
        return best
    }

    static func similarEmail(_ x: AddressFeature, _ y: AddressFeature) -> Bool {
        if let p = x.part, p.count >= 3, p == y.part { return true }
        guard x.scalars.count >= 6, StringSimilarity.isWithinOneEdit(x.scalars, y.scalars) else { return false }
        // john.smith@ and john.smith2@ are two people more often than a typo: a difference in a digit
        // does not count.
        var index = 0
        while index < min(x.scalars.count, y.scalars.count) && x.scalars[index] == y.scalars[index] { index += 1 }
        let digits: ClosedRange<UInt32> = 0x30...0x39
        return !(index < x.scalars.count && digits.contains(x.scalars[index]))
            && !(index < y.scalars.count && digits.contains(y.scalars[index]))
    }

    static func similarPhone(_ x: AddressFeature, _ y: AddressFeature) -> Bool {
        if let p = x.part, p.count == 7, p == y.part { return true }
        return x.scalars.count == y.scalars.count && StringSimilarity.isWithinOneEdit(x.scalars, y.scalars)
    }

    /// Handles compare within a type (twitter with twitter); no common type is no evidence.
    static func handles(_ a: [AddressFeature], _ b: [AddressFeature], strong: inout Bool) -> Int8 {
        var best: Int8 = 0
        for x in a {
            for y in b where x.type == y.type {
                if x.value == y.value {
                    if x.verified && y.verified { strong = true }
                    best = best == 0 ? (x.removed || y.removed ? 2 : 1) : min(best, x.removed || y.removed ? 2 : 1)
                } else if best == 0 {
                    best = 3
                }
            }
        }
        return best
    }
}
