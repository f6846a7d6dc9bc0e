/// String similarity on Unicode scalars, so names in any script compare the same way.
public enum StringSimilarity {
    /// Jaro-Winkler similarity in 0...1 (prefix scale 0.1 over at most 4 characters, applied above a
    /// Jaro similarity of 0.7, as Winkler defined it): MARTHA/MARHTA 0.961, DWAYNE/DUANE 0.84.
    public static func jaroWinkler(_ a: String, _ b: String) -> Double {
        jaroWinkler(a.unicodeScalars.map(\.value), b.unicodeScalars.map(\.value))
    }

    /// Optimal-string-alignment edit distance: insertions, deletions, substitutions and swaps of two
    /// neighbouring characters each count one.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(a.unicodeScalars.map(\.value), b.unicodeScalars.map(\.value))
    }

    static func jaroWinkler(_ a: [UInt32], _ b: [UInt32]) -> Double {
        let jaro = jaro(a, b)
        guard jaro > 0.7 else { return jaro }
        var prefix = 0
        while prefix < min(4, a.count, b.count) && a[prefix] == b[prefix] { prefix += 1 }
        return jaro + Double(prefix) * 0.1 * (1 - jaro)
    }

    static func jaro(_ a: [UInt32], _ b: [UInt32]) -> Double {
        if a.isEmpty || b.isEmpty { return a.isEmpty && b.isEmpty ? 1 : 0 }
        if a == b { return 1 }
        let window = max(0, max(a.count, b.count) / 2 - 1)
        var matchedA = [Bool](repeating: false, count: a.count)
        var matchedB = [Bool](repeating: false, count: b.count)
        var matches = 0
        for i in 0..<a.count {
            let low = max(0, i - window)
            let high = min(b.count - 1, i + window)
            guard low <= high else { continue }
            for j in low...high where !matchedB[j] && a[i] == b[j] {
                matchedA[i] = true
                matchedB[j] = true
                matches += 1
                break
            }
        }
        guard matches > 0 else { return 0 }
        var transpositions = 0
        var j = 0
        for i in 0..<a.count where matchedA[i] {
            while !matchedB[j] { j += 1 }
            if a[i] != b[j] { transpositions += 1 }
            j += 1
        }
        let m = Double(matches)
        return (m / Double(a.count) + m / Double(b.count) + (m - Double(transpositions / 2)) / m) / 3
    }

    static func editDistance(_ a: [UInt32], _ b: [UInt32]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        let width = b.count + 1
        var previous2 = [Int](repeating: 0, count: width)
        var previous = Array(0...b.count)
        var row = [Int](repeating: 0, count: width)
        for i in 1...a.count {
            row[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { best = min(best, previous2[j - 2] + 1) }
                row[j] = best
            }
            swap(&previous2, &previous)
            swap(&previous, &row)
        }
        return previous[b.count]
    }
}
