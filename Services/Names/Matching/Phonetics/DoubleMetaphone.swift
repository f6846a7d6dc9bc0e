/// Lawrence Philips' Double Metaphone (2000): a primary and an alternate phonetic key of a name,
/// at most four characters each, so that spellings of one sound (Smith, Smyth, Schmidt) meet.
///
/// Letters are read after folding (accents dropped) except `Ç` and `Ñ`, which the algorithm knows;
/// anything but letters is ignored, and names in other scripts have empty keys (compare their
/// ``NameFolding/latinized(_:)`` form instead).
public enum DoubleMetaphone {
    public static let maximumLength = 4

    /// The primary and alternate Double Metaphone keys of a name (the alternate equals the
    /// primary when there is none).
    public static func keys(_ name: String) -> (primary: String, alternate: String) {
        var encoder = MetaphoneEncoder(letters: letters(of: name))
        return encoder.encode(maximumLength: maximumLength)
    }

    /// Upper-case ASCII letters, with `Ç` and `Ñ` kept as their Latin-1 bytes.
    static func letters(of name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            switch scalar {
            case "a"..."z": bytes.append(UInt8(scalar.value) - 32)
            case "A"..."Z": bytes.append(UInt8(scalar.value))
            case "ç", "Ç": bytes.append(0xC7)
            case "ñ", "Ñ": bytes.append(0xD1)
            default:
                guard scalar.value > 0x7F, scalar.properties.isAlphabetic else { continue }
                for folded in NameFolding.fold(String(scalar)).unicodeScalars {
                    if ("a"..."z").contains(folded) { bytes.append(UInt8(folded.value) - 32) }
                }
            }
        }
        return bytes
    }
}

/// The rules, one letter at a time as in the original, reading ahead and behind in the name.
struct MetaphoneEncoder {
    /// The letters and five spaces after them: the original reads past the end into that padding,
    /// and some rules ("VAN ", "JOSE" at the end) depend on it.
    let word: [UInt8]
    let length: Int
    let last: Int
    let slavoGermanic: Bool
    var current = 0
    var primary: [UInt8] = []
    var alternate: [UInt8] = []

    init(letters: [UInt8]) {
        word = letters + [UInt8](repeating: 0x20, count: 5)
        length = letters.count
        last = letters.count - 1
        // Slavic or Germanic: a W, a K, or CZ anywhere (WITZ has a W).
        var slavic = false
        for (index, letter) in letters.enumerated() {
            if letter == UInt8(ascii: "W") || letter == UInt8(ascii: "K")
                || (letter == UInt8(ascii: "C") && index + 1 < letters.count && letters[index + 1] == UInt8(ascii: "Z"))
            {
                slavic = true
                break
            }
        }
        slavoGermanic = slavic
    }

    func at(_ index: Int) -> UInt8 { index >= 0 && index < word.count ? word[index] : 0 }

    func isVowel(_ index: Int) -> Bool {
        switch at(index) {
        case UInt8(ascii: "A"), UInt8(ascii: "E"), UInt8(ascii: "I"), UInt8(ascii: "O"), UInt8(ascii: "U"), UInt8(ascii: "Y"):
            return true
        default: return false
        }
    }

    /// Whether one of `options` (all of one length) is written at `start`.
    func has(_ start: Int, _ options: StaticString...) -> Bool {
        guard start >= 0, start < word.count else { return false }
        for option in options {
            let count = option.utf8CodeUnitCount
            guard start + count <= word.count else { continue }
            var equal = true
            option.withUTF8Buffer { buffer in
                for offset in 0..<count where word[start + offset] != buffer[offset] {
                    equal = false
                    break
                }
            }
            if equal { return true }
        }
        return false
    }

    func isChar(_ index: Int, _ character: Unicode.Scalar) -> Bool { at(index) == UInt8(character.value) }

    mutating func add(_ both: StaticString) { add(both, both) }

    mutating func add(_ main: StaticString, _ other: StaticString) {
        main.withUTF8Buffer { primary.append(contentsOf: $0) }
        other.withUTF8Buffer { alternate.append(contentsOf: $0) }
    }

    /// Moves past the current letter, and past its double when it is doubled.
    mutating func skip(doubled letter: Unicode.Scalar) { current += isChar(current + 1, letter) ? 2 : 1 }

    mutating func encode(maximumLength: Int) -> (primary: String, alternate: String) {
        guard length > 0 else { return ("", "") }
        // Silent first letters.
        if has(0, "GN", "KN", "PN", "WR", "PS") { current += 1 }
        // A first X sounds like Z (Xavier), written S.
        if isChar(0, "X") {
            add("S")
            current += 1
        }
        while primary.count < maximumLength || alternate.count < maximumLength {
            if current >= length { break }
            encodeCurrent()
        }
        let first = String(decoding: primary.prefix(maximumLength), as: UTF8.self)
        let second = String(decoding: alternate.prefix(maximumLength), as: UTF8.self)
        return (first, second)
    }

    mutating func encodeCurrent() {
        switch at(current) {
        case UInt8(ascii: "A"), UInt8(ascii: "E"), UInt8(ascii: "I"), UInt8(ascii: "O"), UInt8(ascii: "U"), UInt8(ascii: "Y"):
            // Vowels count only at the start, all as A.
            if current == 0 { add("A") }
            current += 1
        case UInt8(ascii: "B"):
            add("P")
            skip(doubled: "B")
        case 0xC7:
            add("S")
            current += 1
        case UInt8(ascii: "C"): encodeC()
        case UInt8(ascii: "D"): encodeD()
        case UInt8(ascii: "F"):
            skip(doubled: "F")
            add("F")
        case UInt8(ascii: "G"): encodeG()
        case UInt8(ascii: "H"):
            // Sounded only first or between vowels, before a vowel.
            if (current == 0 || isVowel(current - 1)) && isVowel(current + 1) {
                add("H")
                current += 2
            } else {
                current += 1
            }
        case UInt8(ascii: "J"): encodeJ()
        case UInt8(ascii: "K"):
            skip(doubled: "K")
            add("K")
        case UInt8(ascii: "L"): encodeL()
        case UInt8(ascii: "M"):
            // The silent B of "dumb", "thumb" goes with the M.
            if (has(current - 1, "UMB") && (current + 1 == last || has(current + 2, "ER"))) || isChar(current + 1, "M") {
                current += 2
            } else {
                current += 1
            }
            add("M")
        case UInt8(ascii: "N"):
            skip(doubled: "N")
            add("N")
        case 0xD1:
            current += 1
            add("N")
        case UInt8(ascii: "P"):
            if isChar(current + 1, "H") {
                add("F")
                current += 2
            } else {
                // Campbell, raspberry.
                current += has(current + 1, "P", "B") ? 2 : 1
                add("P")
            }
        case UInt8(ascii: "Q"):
            skip(doubled: "Q")
            add("K")
        case UInt8(ascii: "R"):
            // French endings (Rogier) but not Hochmeier.
            if current == last && !slavoGermanic && has(current - 2, "IE") && !has(current - 4, "ME", "MA") {
                add("", "R")
            } else {
                add("R")
            }
            skip(doubled: "R")
        case UInt8(ascii: "S"): encodeS()
        case UInt8(ascii: "T"): encodeT()
        case UInt8(ascii: "V"):
            skip(doubled: "V")
            add("F")
        case UInt8(ascii: "W"): encodeW()
        case UInt8(ascii: "X"):
            // French endings (Breaux) are silent.
            if !(current == last && (has(current - 3, "IAU", "EAU") || has(current - 2, "AU", "OU"))) { add("KS") }
            current += has(current + 1, "C", "X") ? 2 : 1
        case UInt8(ascii: "Z"): encodeZ()
        default: current += 1
        }
    }
}
