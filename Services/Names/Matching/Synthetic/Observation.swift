import Foundation

/// One record of a person as a contact book or a sign-up form would hold it, errors included.
enum Observation {
    static func record(of person: SyntheticPerson, _ random: inout SplitMix64) -> PersonRecord {
        var record = PersonRecord()
        var first: String? = person.first
        var last: String? = person.last
        if random.chance(0.08), let nick = nickname(person.first, &random) { first = nick }
        if random.chance(0.05) { first = typo(first!, &random) }
        if random.chance(0.04) { last = typo(last!, &random) }
        if random.chance(0.02) { first = String(first!.prefix(1)) + "." }
        if person.female && random.chance(0.02) { last = SyntheticLists.lastNames.draw(&random) }  // married name
        if random.chance(0.06) { first = random.chance(0.5) ? first!.uppercased() : first!.lowercased() }
        if random.chance(0.06) { last = random.chance(0.5) ? last!.uppercased() : last!.lowercased() }
        if random.chance(0.04) { first = nil } else if random.chance(0.03) { last = nil }
        if random.chance(0.03) { (first, last) = (last, first) }
        if random.chance(0.02), let f = first, let l = last { (first, last) = ("\(l), \(f)", nil) }
        record.firstName = first
        record.lastName = last
        record.birthday = random.chance(0.15) ? nil : birthday(person, &random)
        if !random.chance(0.12) {
            var city = random.chance(0.07) ? SyntheticLists.cities[person.region]!.draw(&random) : person.city
            if random.chance(0.03) { city = typo(city, &random) }
            record.location = city
        }
        if random.chance(0.7) { record.addresses.append(physical(person, city: record.location, &random)) }
        for email in person.emails where random.chance(0.55) {
            record.addresses.append(MatchAddress(type: "email", value: random.chance(0.01) ? typo(email, &random) : email))
        }
        if random.chance(0.08) {
            let other = ascii(person.first) + String(random.int(100...999)) + "@" + SyntheticLists.emailDomains.draw(&random)
            record.addresses.append(MatchAddress(type: "email", value: other))
        }
        for phone in person.phones where random.chance(0.5) {
            record.addresses.append(MatchAddress(type: "phone", value: written(phone, person.region, &random)))
        }
        if random.chance(0.06) {
            record.addresses.append(
                MatchAddress(
                    type: "phone", value: written(PeopleFactory.nationalNumber(person.region, &random), person.region, &random)))
        }
        if let handle = person.handle, random.chance(0.35) {
            record.addresses.append(MatchAddress(type: "twitter", value: "@" + handle))
        }
        if let system = person.system, random.chance(0.5) { record.addresses.append(MatchAddress(type: "system", value: system)) }
        if random.chance(0.5) {
            record.gender = random.pick(person.female ? ["f", "F", "female", "Female"] : ["m", "M", "male", "Male"])
        }
        record.addresses = record.addresses.compactMap { address in
            guard
                let value = try? AddressNormalizer.normalize(
                    type: address.type, value: address.value, defaultRegion: person.region)
            else { return nil }
            return MatchAddress(
                type: address.type, value: value, verified: address.type != "physical" && random.chance(0.25),
                removed: random.chance(0.04))
        }
        return record
    }

    static func nickname(_ name: String, _ random: inout SplitMix64) -> String? {
        let diminutives = Nicknames.diminutives(of: NameFolding.fold(name))
        guard !diminutives.isEmpty else { return nil }
        return random.pick(diminutives).capitalized
    }

    /// One keyboard slip: a letter inserted, dropped, replaced or swapped with its neighbour.
    static func typo(_ text: String, _ random: inout SplitMix64) -> String {
        var characters = Array(text)
        guard characters.count >= 3 else { return text }
        let position = random.int(1...(characters.count - 1))
        let letter = random.pick(Array("abcdefghijklmnoprstuvwy"))
        switch random.int(0...3) {
        case 0: characters.insert(letter, at: position)
        case 1: characters.remove(at: position)
        case 2: characters[position] = letter
        default: characters.swapAt(position - 1, position)
        }
        return String(characters)
    }

    static func birthday(_ person: SyntheticPerson, _ random: inout SplitMix64) -> String {
        var (year, month, day) = (person.year, person.month, person.day)
        let roll = random.unit()
        if roll < 0.02 && day <= 12 {
            (month, day) = (day, month)
        }  // read the other way round
        else if roll < 0.04 {
            year += random.pick([-10, -1, 1, 10])
        }  // a digit of the year wrong
        else if roll < 0.05 {
            day = day < 20 ? day + 10 : day - 10
        }
        let date = String(format: "%04d-%02d-%02d", year, month, day)
        let form = random.unit()
        if form < 0.06 { return String(format: "%04d", year) }
        if form < 0.1 { return String(format: "--%02d-%02d", month, day) }
        if form < 0.12 { return String(format: "%04d-%02d", year, month) }
        return date
    }

    static func physical(_ person: SyntheticPerson, city: String?, _ random: inout SplitMix64) -> MatchAddress {
        var number = person.streetNumber
        var street = person.street
        if random.chance(0.1) {  // moved
            number = random.int(1...400)
            street = SyntheticLists.streets.draw(&random) + " " + random.pick(SyntheticLists.streetTypes)
        }
        if random.chance(0.3) {
            street = street.replacingOccurrences(of: "Street", with: "St").replacingOccurrences(of: "Avenue", with: "Ave")
                .replacingOccurrences(of: "Road", with: "Rd")
        }
        if random.chance(0.03) { street = typo(street, &random) }
        var text = "\(number) \(street)"
        if random.chance(0.1) { text += ", Apt \(random.int(1...40))" }
        if let city, random.chance(0.5) { text += ", \(city)" }
        return MatchAddress(type: "physical", value: text)
    }

    /// A national significant number written the way people write it: with the country code or the
    /// trunk prefix, grouped with spaces, dashes or dots; rarely with one digit wrong.
    static func written(_ national: String, _ region: String, _ random: inout SplitMix64) -> String {
        var digits = Array(national)
        if random.chance(0.01) { digits[random.int(0...(digits.count - 1))] = Character(String(random.int(0...9))) }
        let separator = random.pick([" ", "-", ".", ""])
        var groups: [String] = []
        var index = 0
        while index < digits.count {
            let size = min(digits.count - index, index == 0 ? 3 : 4)
            groups.append(String(digits[index..<(index + size)]))
            index += size
        }
        let body = groups.joined(separator: separator)
        let code = PhoneRegions.byRegion[region]!.callingCode
        let trunk = PhoneRegions.byRegion[region]!.trunkPrefix ?? ""
        switch random.int(0...3) {
        case 0: return "+\(code) \(body)"
        case 1: return region == "US" ? "(\(groups[0])) \(groups.dropFirst().joined(separator: "-"))" : "00\(code) \(body)"
        case 2 where region == "GB": return "+44 (0)\(body)"
        default: return "\(trunk)\(body)"
        }
    }

    /// Lower-case ASCII letters of a name, for e-mail addresses and handles.
    static func ascii(_ name: String) -> String {
        let latin = NameFolding.latinized(NameFolding.fold(name)) ?? NameFolding.fold(name)
        return String(latin.unicodeScalars.filter { ("a"..."z").contains($0) }.map(Character.init))
    }
}
