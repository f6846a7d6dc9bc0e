import Foundation
import LayerModels
import LayerServer

/// Reads address books as phones and mail programs export them (vCard 3.0 and 4.0, RFC 2426 and
/// RFC 6350) into the person records of the JSON API, which are then checked like any other.
///
/// Read: `N` (else `FN`) for the names, `EMAIL`, `TEL` (also as a `tel:` URI), `ADR` as a
/// physical address, `BDAY` (`19850412`, `1985-04-12`, `--0412`), `GENDER`, `X-<SERVICE>`
/// handles and `X-SOCIALPROFILE`/`IMPP` with a service type. Folded lines, escapes, property
/// groups (`item1.EMAIL`) and parameters are understood; other properties (photos, notes) are
/// skipped.
enum VCard {
    struct Failure: Error {
        var card: Int
        var line: Int
        var reason: String
    }

    static func records(_ text: String) throws(Failure) -> [JSONValue] {
        var cards: [JSONValue] = []
        var current: [String: JSONValue]?
        var addresses: [JSONValue] = []
        var formattedName: String?
        for (number, line) in unfold(text).enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw Failure(card: cards.count, line: number + 1, reason: "line \(number + 1) has no ':' between name and value")
            }
            let head = line[..<colon].split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            var name = head[0].uppercased()
            if let dot = name.lastIndex(of: ".") { name = String(name[name.index(after: dot)...]) }
            let parameters = head.dropFirst().map { $0.uppercased() }
            let value = String(line[line.index(after: colon)...])
            switch name {
            case "BEGIN":
                guard value.uppercased() == "VCARD", current == nil else {
                    throw Failure(
                        card: cards.count, line: number + 1, reason: "BEGIN:VCARD inside a card, or BEGIN of something else")
                }
                current = [:]
                addresses = []
                formattedName = nil
                continue
            case "END":
                guard var card = current, value.uppercased() == "VCARD" else {
                    throw Failure(card: cards.count, line: number + 1, reason: "END:VCARD without BEGIN:VCARD")
                }
                if card["first_name"] == nil && card["last_name"] == nil, let formattedName {
                    let words = formattedName.split(separator: " ").map(String.init)
                    if words.count > 1 {
                        card["first_name"] = .string(words.dropLast().joined(separator: " "))
                        card["last_name"] = .string(words.last!)
                    } else if let only = words.first {
                        card["first_name"] = .string(only)
                    }
                }
                if !addresses.isEmpty { card["addresses"] = .array(addresses) }
                cards.append(.object(card))
                current = nil
                continue
            default: break
            }
            guard current != nil else {
                throw Failure(card: cards.count, line: number + 1, reason: "\(name) outside BEGIN:VCARD … END:VCARD")
            }
            switch name {
            case "N":
                let parts = components(value, separator: ";")
                if let last = parts.first, !last.isEmpty { current?["last_name"] = .string(last) }
                if parts.count > 1, !parts[1].isEmpty { current?["first_name"] = .string(parts[1]) }
            case "FN": formattedName = unescape(value)
            case "EMAIL": addresses.append(["type": "email", "value": .string(unescape(value))])
            case "TEL":
                var number = unescape(value)
                if number.lowercased().hasPrefix("tel:") { number = String(number.dropFirst(4)) }
                addresses.append(["type": "phone", "value": .string(number)])
            case "ADR":
                let parts = components(value, separator: ";").filter { !$0.isEmpty }
                if !parts.isEmpty { addresses.append(["type": "physical", "value": .string(parts.joined(separator: ", "))]) }
            case "BDAY":
                current?["birthday"] = .string(birthday(unescape(value)))
            case "GENDER":
                if let sex = components(value, separator: ";").first, !sex.isEmpty {
                    current?["gender"] = .string(["M": "m", "F": "f", "O": "x", "N": "x", "U": "x"][sex.uppercased()] ?? sex)
                }
            case "X-SOCIALPROFILE", "IMPP":
                let service = parameters.first { $0.hasPrefix("TYPE=") || $0.hasPrefix("X-SERVICE-TYPE=") }
                    .map { String($0.drop { $0 != "=" }.dropFirst()).lowercased() }
                var handle = unescape(value)
                if let slash = handle.lastIndex(of: "/") { handle = String(handle[handle.index(after: slash)...]) }
                if let colon = handle.firstIndex(of: ":") { handle = String(handle[handle.index(after: colon)...]) }
                if let service, !service.isEmpty, !handle.isEmpty, service.allSatisfy({ $0.isASCII && $0.isLetter }) {
                    addresses.append(["type": .string(service), "value": .string(handle)])
                }
            default:
                if name.hasPrefix("X-"), let service = handleServices[name] {
                    addresses.append(["type": .string(service), "value": .string(unescape(value))])
                }
            }
        }
        guard current == nil else {
            throw Failure(card: cards.count, line: 0, reason: "the last card has no END:VCARD")
        }
        guard !cards.isEmpty else { throw Failure(card: 0, line: 0, reason: "there is no BEGIN:VCARD in the body") }
        return cards
    }

    static let handleServices = [
        "X-TWITTER": "twitter", "X-SKYPE": "skype", "X-SKYPE-USERNAME": "skype", "X-FACEBOOK": "facebook",
        "X-JABBER": "jabber", "X-ICQ": "icq", "X-AIM": "aim", "X-MSN": "msn", "X-YAHOO": "yahoo", "X-GOOGLE-TALK": "gtalk",
        "X-LINKEDIN": "linkedin", "X-INSTAGRAM": "instagram", "X-TELEGRAM": "telegram",
    ]

    /// Lines with their folded continuations (a line starting with a space or tab) joined.
    static func unfold(_ text: String) -> [String] {
        var lines: [String] = []
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            var line = String(raw)
            if line.hasSuffix("\r") { line.removeLast() }
            if let first = line.first, first == " " || first == "\t", !lines.isEmpty {
                lines[lines.count - 1] += line.dropFirst()
            } else {
                lines.append(line)
            }
        }
        return lines
    }

    /// The parts of a structured value, split at unescaped separators and unescaped.
    static func components(_ value: String, separator: Character) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for character in value {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                current.append(character)
                escaped = true
            } else if character == separator {
                parts.append(unescape(current))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(unescape(current))
        return parts.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    static func unescape(_ value: String) -> String {
        var result = ""
        var escaped = false
        for character in value {
            if escaped {
                result.append(character == "n" || character == "N" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result.trimmingCharacters(in: .whitespaces)
    }

    /// `19850412` → `1985-04-12`, `--0412` → `--04-12`; other forms are left for the record
    /// check to accept or refuse.
    static func birthday(_ value: String) -> String {
        let text = value.split(separator: "T").first.map(String.init) ?? value
        if text.count == 8, text.allSatisfy(\.isNumber) {
            let digits = Array(text)
            return "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))"
        }
        if text.count == 6, text.hasPrefix("--"), text.dropFirst(2).allSatisfy(\.isNumber) {
            let digits = Array(text.dropFirst(2))
            return "--\(String(digits[0..<2]))-\(String(digits[2..<4]))"
        }
        return text
    }
}
