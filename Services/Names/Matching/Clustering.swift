/// Groups records into entities from scored pairs.
public enum Clustering {
    /// Connected components (union-find) of the records `0..<count` linked by the pairs at or above
    /// `threshold`; each component's indexes ascending, components ordered by their first index.
    /// Single records are components of one.
    public static func components(count: Int, pairs: [ScoredPair], threshold: Double) -> [[Int]] {
        var parent = Array(0..<count)
        func root(_ x: Int) -> Int {
            var x = x
            while parent[x] != x {
                parent[x] = parent[parent[x]]
                x = parent[x]
            }
            return x
        }
        for pair in pairs where pair.probability >= threshold && pair.a < count && pair.b < count {
            let (x, y) = (root(pair.a), root(pair.b))
            if x != y { parent[max(x, y)] = min(x, y) }
        }
        var groups: [Int: [Int]] = [:]
        for index in 0..<count { groups[root(index), default: []].append(index) }
        return groups.values.sorted { $0[0] < $1[0] }
    }
}
