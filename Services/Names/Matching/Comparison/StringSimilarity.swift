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
        // Matched flags as bits: names and places are short, so this needs no allocation.
        guard a.count <= 64 && b.count <= 64 else { return jaroLong(a, b) }
        let window = max(0, max(a.count, b.count) / 2 - 1)
        var matchedA: UInt64 = 0
        var matchedB: UInt64 = 0
        var matches = 0
        for i in 0..<a.count {
            let low = max(0, i - window)
            let high = min(b.count - 1, i + window)
            guard low <= high else { continue }
            for j in low...high where matchedB & (1 << UInt64(j)) == 0 && a[i] == b[j] {
                matchedA |= 1 << UInt64(i)
                matchedB |= 1 << UInt64(j)
                matches += 1
                break
            }
        }
        guard matches > 0 else { return 0 }
        var transpositions = 0
        var j = 0
        for i in 0..<a.count where matchedA & (1 << UInt64(i)) != 0 {
            while matchedB & (1 << UInt64(j)) == 0 { j += 1 }
            if a[i] != b[j] { transpositions += 1 }
            j += 1
        }
        let m = Double(matches)
        return (m / Double(a.count) + m / Double(b.count) + (m - Double(transpositions / 2)) / m) / 3
    }

    private static func jaroLong(_ a: [UInt32], _ b: [UInt32]) -> Double {
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

    /// Whether the edit distance is at most one, in one pass: what matching asks most often.
    static func isWithinOneEdit(_ a: [UInt32], _ b: [UInt32]) -> Bool {
        if abs(a.count - b.count) > 1 { return false }
        var i = 0
        while i < min(a.count, b.count) && a[i] == b[i] { i += 1 }
        if i == a.count && i == b.count { return true }
        if a.count == b.count {
            // One substitution, or two neighbours swapped.
            if a[(i + 1)...] == b[(i + 1)...] { return true }
            return i + 1 < a.count && a[i] == b[i + 1] && a[i + 1] == b[i] && a[(i + 2)...] == b[(i + 2)...]
        }
        // One insertion or deletion.
        return a.count > b.count ? a[(i + 1)...] == b[i...] : a[i...] == b[(i + 1)...]
    }

    static func editDistance(_ a: [UInt32], _ b: [UInt32]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        let width = b.count + 1
        // Three rows in one scratch buffer, rotated by offset: no allocation per call beyond it.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * width) { buffer in
            var (previous2, previous, row) = (0, width, 2 * width)
            for j in 0...b.count {
                buffer[previous + j] = j
                buffer[previous2 + j] = 0
            }
            for i in 1...a.count {
                buffer[row] = i
                for j in 1...b.count {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    var best = min(buffer[previous + j] + 1, buffer[row + j - 1] + 1, buffer[previous + j - 1] + cost)
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                        best = min(best, buffer[previous2 + j - 2] + 1)
                    }
                    buffer[row + j] = best
                }
                (previous2, previous, row) = (previous, row, previous2)
            }
            return buffer[previous + b.count]
        }
    }
}
