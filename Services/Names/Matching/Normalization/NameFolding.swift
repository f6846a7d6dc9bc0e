import Foundation

/// Names reduced to what people agree on when they write them differently: case, accents, widths,
/// punctuation and titles go, letters of every script stay.
public enum NameFolding {
    /// Lower-case, without diacritics, apostrophes removed (`O'Brien` → `obrien`), any other
    /// punctuation or hyphen a word break, words joined by one space: `Jean-Luc` → `jean luc`.
    public static func fold(_ text: String) -> String {
        if let ascii = foldASCII(text) { return ascii }
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var result = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in folded.unicodeScalars {
            if let replacement = letterReplacements[scalar] {
                if pendingSpace, !result.isEmpty { result.append(" ") }
                pendingSpace = false
                result.append(contentsOf: replacement.unicodeScalars)
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .spacingMark
            {
                if pendingSpace, !result.isEmpty { result.append(" ") }
                pendingSpace = false
                result.append(scalar)
            } else if apostrophes.contains(scalar) {
                continue
            } else {
                pendingSpace = true
            }
        }
        return String(result)
    }

    /// The same folding for text that is all ASCII, without Foundation: most names and places are.
    private static func foldASCII(_ text: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            guard byte < 0x80 else { return nil }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                if pendingSpace && !bytes.isEmpty { bytes.append(UInt8(ascii: " ")) }
                pendingSpace = false
                bytes.append(byte | (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? 0x20 : 0))
            case UInt8(ascii: "'"), UInt8(ascii: "`"): continue
            default: pendingSpace = true
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The words of a folded name without titles and generational suffixes.
    public static func words(_ text: String) -> [String] {
        fold(text).split(separator: " ").map(String.init).filter { !titles.contains($0) }
    }

    /// The name in Latin letters, folded, when it is written in another script (`Иванов` → `ivanov`),
    /// so that phonetic keys exist for it; `nil` for names already in Latin letters.
    public static func latinized(_ folded: String) -> String? {
        guard folded.unicodeScalars.contains(where: { $0.value > 0x24F && $0.properties.isAlphabetic }) else { return nil }
        guard let latin = folded.applyingTransform(.toLatin, reverse: false) else { return nil }
        let refolded = fold(latin)
        return refolded.isEmpty || refolded == folded ? nil : refolded
    }

    // Letters that diacritic folding leaves alone because they are letters of their own.
    private static let letterReplacements: [Unicode.Scalar: String] = [
        "ø": "o", "ł": "l", "đ": "d", "ð": "d", "æ": "ae", "œ": "oe", "ß": "ss", "þ": "th", "ı": "i", "ħ": "h",
        "ŀ": "l", "ŧ": "t",
    ]
    private static let apostrophes: Set<Unicode.Scalar> = ["'", "\u{2019}", "\u{2018}", "\u{02BC}", "`", "\u{00B4}"]
    private static let titles: Set<String> = [
        "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "jr", "sr", "ii", "iii", "iv", "phd", "md", "esq",
    ]
}
