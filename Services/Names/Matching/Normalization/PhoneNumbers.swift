import Foundation

/// Reads a phone number as people write it into E.164 (`+<country code><national number>`).
///
/// Limits, on purpose: numbers are checked against the range of lengths of their country's plan
/// (``PhoneRegions``), not against area codes, number ranges or carriers, so a well-formed number
/// that was never assigned passes. Countries outside the table are accepted by E.164's overall
/// limits only (at most 15 digits), and national numbers need a region from the table.
enum PhoneNumbers {
    static func normalize(_ raw: String, defaultRegion: String) throws(NormalizationError) -> String {
        let (digits, international) = try digitsOf(raw)
        if international { return try readInternational(digits) }
        guard let region = PhoneRegions.byRegion[defaultRegion.uppercased()] else {
            throw NormalizationError(
                "unknown region \"\(defaultRegion)\" for a national phone number: write it with its country calling code (+…)")
        }
        // The region's own international prefixes, longest first so that `0011` wins over `00`.
        // `00` is read as international everywhere: no national number starts with it.
        let prefixes = Set(region.internationalPrefixes + ["00"]).sorted { $0.count > $1.count }
        for prefix in prefixes where digits.count > prefix.count && digits.hasPrefix(prefix) {
            return try readInternational(String(digits.dropFirst(prefix.count)))
        }
        let national = nationalNumber(digits, in: [region])
        try checkLength(national, callingCode: region.callingCode, lengths: region.lengths)
        return "+" + region.callingCode + national
    }

    /// The digits of `raw` and whether it was written with `+`: separators people use are dropped,
    /// anything else is refused.
    private static func digitsOf(_ raw: String) throws(NormalizationError) -> (String, Bool) {
        var text = Substring(raw.trimmingCharacters(in: .whitespacesAndNewlines))
        if text.lowercased().hasPrefix("tel:") { text = text.dropFirst(4) }
        var digits = ""
        var plus = false
        for character in text {
            if let value = character.wholeNumberValue, character.isNumber, value < 10 {
                digits.append(Character(String(value)))
            } else if character == "+" {
                guard digits.isEmpty, !plus else { throw NormalizationError("phone number has a \"+\" after its start") }
                plus = true
            } else if character.isWhitespace || "-.()/\u{2010}\u{2011}\u{2013}".contains(character) {
                continue
            } else if character.isLetter {
                throw NormalizationError("phone number contains letters")
            } else {
                throw NormalizationError("phone number contains \"\(character)\", which is not a digit or a separator")
            }
        }
        guard !digits.isEmpty else { throw NormalizationError("phone number has no digits") }
        return (digits, plus)
    }

    /// Splits the calling code off (E.164 codes are prefix-free) and checks the rest.
    private static func readInternational(_ digits: String) throws(NormalizationError) -> String {
        var callingCode: String?
        for length in 1...3 where digits.count >= length {
            let candidate = String(digits.prefix(length))
            if PhoneRegions.assignedCallingCodes.contains(candidate) {
                callingCode = candidate
                break
            }
        }
        guard let callingCode else {
            throw NormalizationError("unknown country calling code +\(digits.prefix(3))")
        }
        let rest = String(digits.dropFirst(callingCode.count))
        guard let regions = PhoneRegions.byCallingCode[callingCode] else {
            try checkLength(rest, callingCode: callingCode, lengths: 4...14)
            return "+" + callingCode + rest
        }
        var national = nationalNumber(rest, in: regions)
        let lengths = regions.map(\.lengths.lowerBound).min()!...regions.map(\.lengths.upperBound).max()!
        // Mexican mobiles were written `+52 1 …` until 2019: the 1 is no longer part of the number.
        if callingCode == "52", national.count == 11, national.hasPrefix("1") { national.removeFirst() }
        try checkLength(national, callingCode: callingCode, lengths: lengths)
        return "+" + callingCode + national
    }

    /// Drops a trunk prefix (and a carrier code after it) when that leaves a number of a plausible
    /// length, or when the number is too long with it: `8 812 …` in Russia loses its 8, `812 …` keeps it.
    /// After a calling code this also removes the `(0)` of `+44 (0)20 …`.
    private static func nationalNumber(_ digits: String, in regions: [PhoneRegion]) -> String {
        for region in regions {
            guard let trunk = region.trunkPrefix, digits.hasPrefix(trunk) else { continue }
            var stripped = String(digits.dropFirst(trunk.count))
            if region.carrierCodeDigits > 0, stripped.count > region.lengths.upperBound,
                stripped.count - region.carrierCodeDigits >= region.lengths.lowerBound
            {
                stripped = String(stripped.dropFirst(region.carrierCodeDigits))
            }
            if region.lengths.contains(stripped.count) || digits.count > region.lengths.upperBound { return stripped }
        }
        return digits
    }

    private static func checkLength(
        _ national: String, callingCode: String, lengths: ClosedRange<Int>
    ) throws(NormalizationError) {
        let maximum = min(lengths.upperBound, 15 - callingCode.count)
        if national.count < lengths.lowerBound {
            throw NormalizationError("phone number is too short for +\(callingCode)")
        }
        if national.count > maximum {
            throw NormalizationError("phone number is too long for +\(callingCode)")
        }
    }
}
