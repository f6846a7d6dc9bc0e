import Foundation
import LayerModels
import LayerServer
import NameMatching

/// A person record as a client sent it, checked and normalised: the raw JSON for the immutable
/// tier, and the record the matcher works on.
struct ValidatedPerson: Sendable {
    var raw: JSONValue
    var record: PersonRecord
    var devices: [JSONValue]
}

/// One thing wrong with one record of a request: where, which field, and why.
struct RecordProblem: Sendable, Encodable {
    var index: Int
    var property: String
    var reason: String
}

/// Reads the person records of a request. Every record is checked before anything is stored; a
/// single invalid record makes the whole request 422 with every problem in `data.errors`.
struct PersonReader: Sendable {
    /// The properties a person record may have (`id`, `fn_metaphone` and `ln_metaphone` are what
    /// the service answers with; a client may send them back, and they are ignored).
    static let keys: Set<String> = [
        "id", "first_name", "last_name", "fn_metaphone", "ln_metaphone", "addresses", "gender", "birthday", "location",
        "devices",
    ]
    static let addressKeys: Set<String> = ["type", "value", "verified", "policy", "removed", "hidden"]
    static let maxText = 256
    static let maxAddresses = 100
    static let maxDevices = 50
    /// The longest address value, in UTF-8 bytes: the address index holds values whole, and an
    /// index row has room for about 2.7 KB.
    static let maxValueBytes = 1024
    /// A device is whatever the app keeps about it (a push token, a model name): small, but every
    /// write to a person merges them all again.
    static let maxDeviceBytes = 4096

    let defaultRegion: String
    /// The user who sends the records; nil for the app's backend (and for entries read back,
    /// which were checked when they came). A user may send a `system` address only for their own
    /// user id: anything else would let them speak for another user.
    var submitter: String? = nil

    /// The records of `list`, property `name` of the body; throws 422 naming every problem.
    func read(_ list: JSONValue?, name: String, limit: Int) throws -> [ValidatedPerson] {
        guard let list else { throw APIError(.missingProperty, "The body needs '\(name)', a list of records.", property: name) }
        guard case .array(let items) = list else { throw APIError.invalid(name, "'\(name)' is a list of records.") }
        guard items.count <= limit else {
            throw APIError(
                .requestTooLarge, "A request holds at most \(limit) records; this one has \(items.count).", property: name,
                extra: ["limit": .number(Double(limit))])
        }
        var problems: [RecordProblem] = []
        var people: [ValidatedPerson] = []
        for (index, item) in items.enumerated() {
            var found: [RecordProblem] = []
            if let person = read(item, index: index, problems: &found), found.isEmpty { people.append(person) }
            problems += found
        }
        guard problems.isEmpty else {
            let first = problems[0]
            throw APIError(
                .invalidProperty, "Record \(first.index) of '\(name)': \(first.reason)",
                data: .object([
                    "property": .string("\(name)[\(first.index)]" + (first.property.isEmpty ? "" : ".\(first.property)")),
                    "errors": .array(problems.prefix(1000).map(\.json)),
                ]))
        }
        return people
    }

    func read(_ item: JSONValue, index: Int, problems: inout [RecordProblem]) -> ValidatedPerson? {
        func problem(_ property: String, _ reason: String) {
            problems.append(RecordProblem(index: index, property: property, reason: reason))
        }
        guard case .object(let fields) = item else {
            problem("", "A record is a JSON object.")
            return nil
        }
        for key in fields.keys.sorted() where !Self.keys.contains(key) {
            problem(key, "'\(key)' is not a field of a person.")
        }
        var record = PersonRecord()
        record.firstName = text(fields["first_name"], "first_name", problem)
        record.lastName = text(fields["last_name"], "last_name", problem)
        record.location = text(fields["location"], "location", problem)
        if let gender = text(fields["gender"], "gender", problem) {
            record.gender =
                Self.gender(gender)
                ?? {
                    problem("gender", "gender is m, f or x (or male, female, other).")
                    return nil
                }()
        }
        if let birthday = text(fields["birthday"], "birthday", problem) {
            if let normalized = Self.birthday(birthday) {
                record.birthday = normalized
            } else {
                problem("birthday", "birthday is YYYY-MM-DD, YYYY-MM, YYYY or --MM-DD.")
            }
        }
        record.addresses = addresses(fields["addresses"], problem)
        var devices: [JSONValue] = []
        switch fields["devices"] {
        case nil, .null?: break
        case .array(let list)? where list.count <= Self.maxDevices:
            devices = list
            if let large = list.firstIndex(where: { $0.jsonText.utf8.count > Self.maxDeviceBytes }) {
                problem("devices[\(large)]", "A device is at most \(Self.maxDeviceBytes) bytes of JSON.")
            }
        default: problem("devices", "devices is a list of at most \(Self.maxDevices) values.")
        }
        if record.firstName == nil && record.lastName == nil && record.addresses.isEmpty && problems.isEmpty {
            problem("", "The record is empty: it needs a name or an address.")
        }
        return ValidatedPerson(raw: item, record: record, devices: devices)
    }

    private func text(_ value: JSONValue?, _ property: String, _ problem: (String, String) -> Void) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?:
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.count <= Self.maxText else {
                problem(property, "\(property) is at most \(Self.maxText) characters.")
                return nil
            }
            return trimmed.isEmpty ? nil : trimmed
        default:
            problem(property, "\(property) is a string.")
            return nil
        }
    }

    private func addresses(_ value: JSONValue?, _ problem: (String, String) -> Void) -> [MatchAddress] {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value, items.count <= Self.maxAddresses else {
            problem("addresses", "addresses is a list of at most \(Self.maxAddresses) addresses.")
            return []
        }
        var addresses: [MatchAddress] = []
        for (position, item) in items.enumerated() {
            let property = "addresses[\(position)]"
            guard case .object(let fields) = item else {
                problem(property, "An address is an object with type and value.")
                continue
            }
            if let unknown = fields.keys.sorted().first(where: { !Self.addressKeys.contains($0) }) {
                problem("\(property).\(unknown)", "'\(unknown)' is not a field of an address.")
                continue
            }
            guard case .string(let type)? = fields["type"] else {
                problem(
                    "\(property).type", "An address needs a type (email, phone, system, physical or another lower-case word).")
                continue
            }
            guard AddressNormalizer.isValidType(type) else {
                problem(
                    "\(property).type", "'\(type)' is not an address type: a type is a lower-case word such as email or phone.")
                continue
            }
            guard case .string(let raw)? = fields["value"] else {
                problem("\(property).value", "An address needs a value (a string).")
                continue
            }
            guard raw.utf8.count <= Self.maxValueBytes else {
                problem("\(property).value", "An address value is at most \(Self.maxValueBytes) bytes.")
                continue
            }
            var verified = false
            switch fields["verified"] {
            case nil, .null?: break
            case .bool(let flag)?: verified = flag
            default:
                problem("\(property).verified", "verified is true or false.")
                continue
            }
            do throws(NormalizationError) {
                let normalized = try AddressNormalizer.normalize(type: type, value: raw, defaultRegion: defaultRegion)
                if type == "system", let submitter, normalized != submitter {
                    problem("\(property).value", "A user may send a system address only for their own user id.")
                    continue
                }
                if let index = addresses.firstIndex(where: { $0.type == type && $0.value == normalized }) {
                    addresses[index].verified = addresses[index].verified || verified
                } else {
                    addresses.append(MatchAddress(type: type, value: normalized, verified: verified))
                }
            } catch {
                problem("\(property).value", error.reason)
            }
        }
        return addresses
    }

    static func gender(_ text: String) -> String? {
        switch text.lowercased() {
        case "m", "male": "m"
        case "f", "female": "f"
        case "x", "other", "nonbinary", "non-binary", "u", "unknown": "x"
        default: nil
        }
    }

    /// `YYYY-MM-DD`, `YYYY-MM`, `YYYY` or `--MM-DD` (also written `YYYYMMDD` or with slashes);
    /// nil for anything else. The day is not checked against the month: real records carry dates
    /// such as 30 February, typos of a real birthday that still help to match it. For the same
    /// reason a full date whose month or day is out of range (`1937-12-33`, `1972-95-18`: what
    /// typing errors in real data sets look like) keeps the part that is valid (`1937-12`, `1972`)
    /// instead of refusing the record; the raw tier keeps what was sent.
    static func birthday(_ text: String) -> String? {
        var text = text.replacingOccurrences(of: "/", with: "-")
        if text.count == 8, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            let digits = Array(text)
            text = "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func digits(_ part: String, _ count: Int) -> Bool { part.count == count && part.allSatisfy { $0.isASCII && $0.isNumber } }
        func number(_ part: String, digits count: Int, in range: ClosedRange<Int>) -> Bool {
            digits(part, count) && range.contains(Int(part)!)
        }
        let (year, month, day) = (1000...2999, 1...12, 1...31)
        switch parts.count {
        case 1 where number(parts[0], digits: 4, in: year): return text
        case 2 where number(parts[0], digits: 4, in: year) && number(parts[1], digits: 2, in: month): return text
        case 3 where number(parts[0], digits: 4, in: year) && digits(parts[1], 2) && digits(parts[2], 2):
            guard number(parts[1], digits: 2, in: month) else { return parts[0] }
            guard number(parts[2], digits: 2, in: day) else { return "\(parts[0])-\(parts[1])" }
            return text
        case 4
        where parts[0].isEmpty && parts[1].isEmpty && number(parts[2], digits: 2, in: month)
            && number(parts[3], digits: 2, in: day):
            return text
        default: return nil
        }
    }
}

extension RecordProblem {
    var json: JSONValue { ["index": .number(Double(index)), "property": .string(property), "reason": .string(reason)] }
}
