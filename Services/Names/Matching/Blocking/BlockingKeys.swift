/// Blocking: two records become a candidate pair when they share a key. The keys are chosen so
/// that a pair stays reachable when any one field is wrong or missing: several keys each leave out a
/// different field, and none is so coarse (a bare initial, a bare year) that it makes giant blocks.
///
/// Per record, at most 15 keys: up to three addresses as they are; the last seven digits of a
/// phone (another country code or area prefix); the local part of an e-mail (another domain);
/// the two names' phonetic keys in either order (nicknames resolved, first and last swapped); last
/// name sound with birth year; first name sound with birth year; the full birth date; first name
/// sound with location; last name sound with location (or, without one, each name's sound with the
/// postal code); house number with street; the postal code alone; the street name alone; and a
/// sorted-neighbourhood style key on the names' first letters, which survives a typo that changes
/// a name's sound.
enum BlockingKeys {
    static let maximumAddressKeys = 3

    /// The keys of a record; without the `wide` ones (the postal code alone, the street name alone)
    /// for estimating a model: those make many candidate pairs of neighbours, which EM would take
    /// for a kind of match of their own.
    static func keys(_ features: DerivedFeatures, wide: Bool = true) -> [String] {
        var keys: [String] = []
        keys.reserveCapacity(15)
        let addresses =
            (features.systems + features.emails.filter(\.verified) + features.phones.filter(\.verified)
                + features.emails.filter { !$0.verified } + features.phones.filter { !$0.verified } + features.handles)
        var seen = Set<String>()
        for address in addresses where seen.insert(address.value).inserted {
            if seen.count > maximumAddressKeys { break }
            keys.append("a:\(address.type):\(address.value)")
        }
        if let phone = features.phones.first?.part, phone.count == 7 { keys.append("p7:\(phone)") }
        if let local = features.emails.first?.part, local.count >= 3 { keys.append("el:\(local)") }

        let first = features.first
        let last = features.last
        let year = features.birthday?.year
        if let first, let last, !first.canonicalKey.isEmpty, !last.primaryKey.isEmpty {
            let pair = [first.canonicalKey, last.primaryKey].sorted()
            keys.append("nm:\(pair[0])|\(pair[1])")
        }
        if let last, !last.primaryKey.isEmpty, let year { keys.append("ly:\(last.primaryKey)|\(year)") }
        if let first, !first.canonicalKey.isEmpty, let year { keys.append("fy:\(first.canonicalKey)|\(year)") }
        if let birthday = features.birthday, birthday.isComplete {
            keys.append("bd:\(birthday.year!)-\(birthday.month!)-\(birthday.day!)")
        }
        if let first, !first.canonicalKey.isEmpty, let location = features.locationText {
            keys.append("fl:\(first.canonicalKey)|\(location)")
        }
        if let last, !last.primaryKey.isEmpty, let location = features.locationText {
            keys.append("ll:\(last.primaryKey)|\(location)")
        }
        if let physical = features.physical.first, let number = physical.number, let street = physical.street {
            keys.append("st:\(number)|\(street)")
        }
        // Names with the postal code of the first address: the household's keys when no location
        // is given (a postal code is coarse enough to hold many people, fine enough to stay small).
        if features.locationText == nil, let code = features.physical.first?.postalCode {
            if let last, !last.primaryKey.isEmpty { keys.append("lz:\(last.primaryKey)|\(code)") }
            if let first, !first.canonicalKey.isEmpty { keys.append("fz:\(first.canonicalKey)|\(code)") }
        }
        // The postal code alone and the street name alone: what still meets when the names, the
        // birthday and the house number are all wrong at once (a record typed again from a form).
        // Both are small blocks in most stores; where they are not, the block cap skips them.
        if wide, let code = features.physical.first?.postalCode { keys.append("z:\(code)") }
        if wide, let street = features.physical.first?.street { keys.append("s:\(street)") }
        if let first, let last {
            // A sorted-neighbourhood style key: the last name's first four letters and the first
            // name's first three, which survives a typo late in either name that changes its sound.
            let lastLetters = (last.latin ?? last.folded).unicodeScalars.filter { $0 != " " }
            let firstLetters = (first.latin ?? first.folded).unicodeScalars
            if lastLetters.count >= 3 {
                let head = String(String.UnicodeScalarView(lastLetters.prefix(4)))
                keys.append("px:\(head)|\(String(String.UnicodeScalarView(firstLetters.prefix(3))))")
            }
        }
        return keys
    }
}

extension MatchFeatures {
    /// The blocking keys: two records become a candidate pair when they share one (see
    /// ``Deduplicator`` for how blocks are bounded).
    public var blockingKeys: [String] { BlockingKeys.keys(derived) }
    /// The blocking keys a model is estimated on (``Deduplicator/wideBlocking`` off).
    public var estimationBlockingKeys: [String] { BlockingKeys.keys(derived, wide: false) }
}
