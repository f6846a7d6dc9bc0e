import Foundation

/// One name of a record, prepared for comparison: folded words, phonetic keys, formal forms.
final class NameFeature: Sendable {
    /// Folded words joined by a space: `mary jane`.
    let folded: String
    /// The folded name without spaces, as scalars, for string similarity.
    let scalars: [UInt32]
    let words: [String]
    /// Double Metaphone keys of the main word (first names) or of the whole name (last names),
    /// read from the Latin form when the name is written in another script.
    let primaryKey: String
    let alternateKey: String
    /// The folded Latin form of a name written in another script.
    let latin: String?
    /// First names: the formal names the first word may stand for (itself included).
    let formals: [String]
    /// Hashes of `formals`, compared instead of the strings on every pair (features are never stored
    /// with their derived parts, so per-process hashes are enough).
    let formalHashes: [Int]
    /// The primary key of the canonical formal name: what blocking uses.
    let canonicalKey: String
    let common: Bool

    init?(words: [String], given: Bool) {
        guard !words.isEmpty else { return nil }
        self.words = words
        folded = words.joined(separator: " ")
        scalars = folded.unicodeScalars.filter { $0 != " " }.map(\.value)
        latin = NameFolding.latinized(folded)
        let main = given ? words[0] : words.joined()
        let latinMain = latin.map { given ? String($0.split(separator: " ").first ?? "") : $0.replacingSpaces() } ?? main
        (primaryKey, alternateKey) = DoubleMetaphone.keys(latinMain)
        if given {
            formals = Nicknames.formalNames(main)
            canonicalKey = DoubleMetaphone.keys(Nicknames.canonical(latinMain)).primary
            common = formals.contains { CommonNames.givenNames.contains($0) }
        } else {
            formals = [main]
            canonicalKey = primaryKey
            common = CommonNames.surnames.contains(main)
        }
        formalHashes = formals.map(\.hashValue)
    }

    /// A name of one letter (`J.`), which can only be compared by its initial.
    var isInitial: Bool { scalars.count == 1 }

    /// Whether the first words can name one person through a diminutive (``Nicknames/equivalent(_:_:)``).
    func sharesFormalName(with other: NameFeature) -> Bool {
        formalHashes.contains { other.formalHashes.contains($0) }
    }

    /// Whether the names share a phonetic key (primary or alternate).
    func soundsLike(_ other: NameFeature) -> Bool {
        guard !primaryKey.isEmpty, !other.primaryKey.isEmpty else { return false }
        return primaryKey == other.primaryKey || primaryKey == other.alternateKey || alternateKey == other.primaryKey
            || (alternateKey == other.alternateKey && alternateKey != primaryKey)
    }
}

extension String {
    func replacingSpaces() -> String { String(unicodeScalars.filter { $0 != " " }) }
}

/// Splits what a record gives as names into first and last: `Smith, John` in one field is last name
/// first; a whole name in one field with the other empty is split before its last word.
enum NameOrder {
    static func split(first: String?, last: String?) -> (first: [String], last: [String]) {
        let rawFirst = first?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let rawLast = last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        var firstWords = NameFolding.words(rawFirst)
        var lastWords = NameFolding.words(rawLast)
        if lastWords.isEmpty || firstWords.isEmpty {
            let whole = lastWords.isEmpty ? rawFirst : rawLast
            if let comma = whole.firstIndex(of: ",") {
                let before = NameFolding.words(String(whole[..<comma]))
                let after = NameFolding.words(String(whole[whole.index(after: comma)...]))
                if !before.isEmpty && !after.isEmpty { return (after, before) }
            }
            let words = lastWords.isEmpty ? firstWords : lastWords
            if words.count >= 2 && !words.contains(where: { $0.unicodeScalars.count > 1 && isCJK($0) }) {
                firstWords = Array(words.dropLast())
                lastWords = [words.last!]
            }
        }
        return (firstWords, lastWords)
    }

    /// Chinese, Japanese and Korean names are written without spaces between given and family name,
    /// so a single word of them is not split.
    private static func isCJK(_ word: String) -> Bool {
        word.unicodeScalars.contains { (0x3040...0x9FFF).contains($0.value) || (0xAC00...0xD7AF).contains($0.value) }
    }
}
