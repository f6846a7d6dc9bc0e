import Foundation

public enum AddressNormalizer {
    /// The normalised form of `value` for an address of `type`, or why there is none.
    ///
    /// - `phone`: E.164 (`+<country code><number>`). A number written with `+`, `00` or the region's
    ///   own international prefix (`011` in North America, `810` in Russia, …) is read as
    ///   international; any other is national to `defaultRegion` (ISO 3166 alpha-2), whose trunk
    ///   prefix is dropped (`0` in most of Europe, `8` in Russia, `1` in North America; Italy keeps its
    ///   `0`). Spaces, dashes, dots, slashes, parentheses and a leading `tel:` are allowed. Lengths
    ///   are checked against a range per country only: area codes and carriers are not validated.
    /// - `email`: one `@`, a local part, a domain with a dot, no spaces; the whole address is
    ///   lower-cased, because the providers people use treat local parts without case and two
    ///   spellings of one mailbox must match.
    /// - `system`: trimmed (an app's user id, kept as it is otherwise).
    /// - `physical`: trimmed, runs of white space collapsed to one space.
    /// - any other type is a handle (`twitter`, `facebook`, …): trimmed, a leading `@` dropped,
    ///   lower-cased, no white space inside.
    public static func normalize(type: String, value: String, defaultRegion: String) throws(NormalizationError) -> String {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw NormalizationError("\(type) address is empty") }
        switch type {
        case "phone": return try PhoneNumbers.normalize(trimmed, defaultRegion: defaultRegion)
        case "email": return try normalizeEmail(trimmed)
        case "system": return trimmed
        case "physical": return trimmed.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        default: return try normalizeHandle(trimmed, type: type)
        }
    }

    /// Whether `type` is an address type at all: a lower-case word (`^[a-z][a-z0-9_]*$`), at most
    /// 32 characters.
    public static func isValidType(_ type: String) -> Bool {
        let bytes = Array(type.utf8)
        guard let first = bytes.first, bytes.count <= 32, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return false
        }
        return bytes.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    /// Whether `region` (ISO 3166 alpha-2, any case) is a region whose phone numbering is known, so
    /// that national numbers can be read in it.
    public static func isKnownRegion(_ region: String) -> Bool { PhoneRegions.byRegion[region.uppercased()] != nil }

    /// The ISO 3166 alpha-2 codes of the regions whose numbering is known.
    public static var knownRegions: [String] { PhoneRegions.all.map(\.region).sorted() }

    static func normalizeEmail(_ value: String) throws(NormalizationError) -> String {
        var text = Substring(value)
        if text.lowercased().hasPrefix("mailto:") { text = text.dropFirst(7) }
        guard !text.contains(where: \.isWhitespace) else { throw NormalizationError("e-mail address contains spaces") }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw NormalizationError("e-mail address must contain exactly one \"@\"") }
        let (local, domain) = (parts[0], parts[1])
        guard !local.isEmpty else { throw NormalizationError("e-mail address has nothing before \"@\"") }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else {
            throw NormalizationError("e-mail domain \"\(domain)\" is not a domain name with a dot")
        }
        return text.lowercased()
    }

    static func normalizeHandle(_ value: String, type: String) throws(NormalizationError) -> String {
        let handle = value.hasPrefix("@") ? value.dropFirst() : Substring(value)
        guard !handle.isEmpty else { throw NormalizationError("\(type) handle is empty") }
        guard !handle.contains(where: \.isWhitespace) else {
            throw NormalizationError("\(type) handle contains spaces")
        }
        return handle.lowercased()
    }
}
