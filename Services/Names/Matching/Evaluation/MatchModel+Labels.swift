extension MatchModel {
    /// The probability at or above which a pair is reported as one person by default: the
    /// probabilities are calibrated, so a pair above one half is more likely one person than not.
    public static let recommendedThreshold = 0.5

    /// The model counted from the truth instead of estimated: the share of each level among the
    /// candidate pairs that are one entity (m) and among those that are not (u). What EM should
    /// recover on data with known entities.
    public static func counted(pairs: [ScoredPair], entityIDs: [Int]) -> MatchModel {
        var m = factorLevelCounts.map { [Double](repeating: 0, count: $0) }
        var u = m
        var matches = 0.0
        for pair in pairs {
            let isMatch = entityIDs[pair.a] == entityIDs[pair.b]
            if isMatch { matches += 1 }
            for (factor, level) in factorLevels(pair.comparison).enumerated() where level > 0 {
                if isMatch { m[factor][level - 1] += 1 } else { u[factor][level - 1] += 1 }
            }
        }
        func normalized(_ rows: [[Double]]) -> [[Double]] {
            rows.map { row in
                let sum = row.reduce(0, +)
                return sum == 0 ? row.map { _ in 1 / Double(row.count) } : row.map { $0 / sum }
            }
        }
        return MatchModel(prior: pairs.isEmpty ? 0 : matches / Double(pairs.count), m: normalized(m), u: normalized(u))
    }

    /// The model with its calibration fitted to labelled pairs (`pairs` of a set of records whose
    /// true entities are `entityIDs`): the slope and intercept on the log odds that minimise the log
    /// loss, by Newton's method.
    public func calibrated(pairs: [ScoredPair], entityIDs: [Int]) -> MatchModel {
        let scaled = scaled(toRecords: entityIDs.count)
        let samples = pairs.map { (x: scaled.logOdds($0.comparison), y: entityIDs[$0.a] == entityIDs[$0.b] ? 1.0 : 0.0) }
        guard samples.contains(where: { $0.y == 1 }), samples.contains(where: { $0.y == 0 }) else { return self }
        var (a, b) = (1.0, 0.0)
        for _ in 0..<50 {
            var (ga, gb, haa, hab, hbb) = (0.0, 0.0, 0.0, 0.0, 0.0)
            for (x, y) in samples {
                let p = Self.logistic(a * x + b)
                let w = max(p * (1 - p), 1e-12)
                ga += (p - y) * x
                gb += p - y
                haa += w * x * x
                hab += w * x
                hbb += w
            }
            // A little ridge keeps the step defined when the data separate perfectly.
            haa += 1e-6
            hbb += 1e-6
            let det = haa * hbb - hab * hab
            guard det > 0 else { break }
            let da = (hbb * ga - hab * gb) / det
            let db = (haa * gb - hab * ga) / det
            a -= da
            b -= db
            if abs(da) < 1e-9 && abs(db) < 1e-9 { break }
        }
        var model = self
        model.calibration = [a, b]
        return model
    }
}
