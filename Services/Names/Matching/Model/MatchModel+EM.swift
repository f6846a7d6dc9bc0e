import Foundation

extension MatchModel {
    /// Re-estimates the model from the comparisons of an app's candidate pairs with EM, starting
    /// from `self`: each round weighs every pair by its current match probability among candidates
    /// (E) and re-counts the levels of each factor among matches and non-matches with those weights
    /// (M), until no probability moves by more than `tolerance`. Probabilities are kept within
    /// 1e-4…1-1e-4 so that no level is ever taken as impossible. `m`, `candidateU` and `prior` are
    /// re-estimated; `u` (random pairs) is kept, and duplicates per record follow from the expected
    /// matches over `recordCount` records (the records the pairs came from; by default the model's).
    public func estimated(
        from comparisons: [Comparison], recordCount: Int? = nil, maximumIterations: Int = 100, tolerance: Double = 1e-5
    ) -> MatchModel {
        // Pairs with one pattern behave alike: EM runs over the distinct patterns and their counts.
        var counts: [UInt64: Double] = [:]
        for comparison in comparisons { counts[comparison.pattern, default: 0] += 1 }
        guard !counts.isEmpty else { return self }
        let patterns = counts.map { (levels: Self.factorLevels(Comparison(packed: $0.key)), count: $0.value) }
        var model = self
        for _ in 0..<maximumIterations {
            let next = model.step(patterns)
            let change =
                zip(next.m + next.candidateU, model.m + model.candidateU).flatMap { zip($0, $1).map { abs($0 - $1) } }
                .max() ?? 0
            let priorChange = abs(next.prior - model.prior)
            model = next
            if change < tolerance && priorChange < tolerance { break }
        }
        let records = recordCount ?? self.recordCount
        model.recordCount = records
        model.duplicatesPerRecord = 2 * model.prior * Double(comparisons.count) / Double(max(records, 1))
        return model
    }

    /// One EM round among candidate pairs (prior, m and candidate u).
    private func step(_ patterns: [(levels: [Int], count: Double)]) -> MatchModel {
        var mCounts = Self.factorLevelCounts.map { [Double](repeating: 0, count: $0) }
        var uCounts = mCounts
        var matches = 0.0
        var total = 0.0
        let priorOdds = log(prior / (1 - prior))
        for (levels, count) in patterns {
            var logOdds = priorOdds
            for (factor, level) in levels.enumerated() where level > 0 {
                logOdds += log(m[factor][level - 1] / candidateU[factor][level - 1])
            }
            let p = Self.logistic(logOdds)
            matches += p * count
            total += count
            for (factor, level) in levels.enumerated() where level > 0 {
                mCounts[factor][level - 1] += p * count
                uCounts[factor][level - 1] += (1 - p) * count
            }
        }
        var next = self
        next.prior = min(max(matches / total, 1e-6), 1 - 1e-6)
        next.m = Self.normalized(mCounts, fallback: m)
        next.candidateU = Self.normalized(uCounts, fallback: candidateU)
        return next
    }

    static func normalized(_ counts: [[Double]], fallback: [[Double]]) -> [[Double]] {
        zip(counts, fallback).map { counts, fallback in
            let sum = counts.reduce(0, +)
            guard sum > 0 else { return fallback }
            let clamped = counts.map { min(max($0 / sum, 1e-4), 1 - 1e-4) }
            let clampedSum = clamped.reduce(0, +)
            return clamped.map { $0 / clampedSum }
        }
    }

    /// The model with `u` measured on `sampleSize` random pairs of `records` (seeded, so the same
    /// records give the same model): nearly all random pairs are of different people. The `u` of
    /// the household factors of possible relatives is measured on random pairs that share a last
    /// name (``withRelativesU(_:weighing:)``), a quarter as many, or on `relatives` if given.
    public func withRandomPairU(
        from records: [MatchFeatures], sampleSize: Int = 200_000, seed: UInt64 = 1, relatives: [Comparison]? = nil
    ) -> MatchModel {
        guard records.count >= 2 else { return self }
        var random = SplitMix64(seed: seed)
        let pairs = (0..<sampleSize).map { _ in
            let a = random.int(0...(records.count - 1))
            var b = random.int(0...(records.count - 2))
            if b >= a { b += 1 }
            return (a, b)
        }
        var counts = Self.factorLevelCounts.map { [Double](repeating: 0, count: $0) }
        for comparison in Comparison.compare(pairs: pairs, of: records) {
            for (factor, level) in Self.factorLevels(comparison).enumerated()
            where level > 0 && !Self.relativeFactors.contains(factor) {
                counts[factor][level - 1] += 1
            }
        }
        var model = self
        model.u = Self.flooredU(counts, fallback: u, floor: 1 / Double(sampleSize))
        return model.withRelativesU(
            relatives ?? Self.relativePairs(records, sampleSize: sampleSize / 4, seed: seed), weighing: nil)
    }

    /// The factors of the household of possible relatives (after ``factorFields``).
    static let relativeFactors = (1 + factorFields.count)..<factors.count

    /// The model with the `u` of the household factors of possible relatives measured on `samples`,
    /// random pairs that share a last name (``relativePairs(_:sampleSize:seed:)``), among those whose
    /// names could be relatives': how often two different people of one family name share a home
    /// or a phone in this store. Such pairs also hold the store's duplicates whose first name was replaced or
    /// mistyped beyond recognition, which share the home by definition; where they are many (a
    /// store of few families and many duplicates) they would pass for relatives. With `weighing`,
    /// each pair counts as much as that model takes it for two people (its probability of a match
    /// taken away), which leaves them out.
    func withRelativesU(_ samples: [Comparison], weighing: MatchModel?) -> MatchModel {
        guard !samples.isEmpty else { return self }
        let weights = weighing.map(Weights.init)
        var counts = Self.factorLevelCounts.map { [Double](repeating: 0, count: $0) }
        for comparison in samples {
            let weight = weights.map { 1 - Self.logistic($0.logOdds(comparison)) } ?? 1
            for (factor, level) in Self.factorLevels(comparison).enumerated()
            where level > 0 && Self.relativeFactors.contains(factor) {
                counts[factor][level - 1] += weight
            }
        }
        var model = self
        let floor = 1 / Double(samples.count)
        model.u =
            Array(u[..<Self.relativeFactors.lowerBound])
            + Self.flooredU(Array(counts[Self.relativeFactors]), fallback: Array(u[Self.relativeFactors]), floor: floor)
        return model
    }

    /// `sampleSize` comparisons of random pairs drawn uniformly among the pairs of `records` that
    /// share a last name: a name by its number of pairs, then two of its records (seeded).
    static func relativePairs(_ records: [MatchFeatures], sampleSize: Int, seed: UInt64) -> [Comparison] {
        var random = SplitMix64(seed: seed &+ 1)
        // In the names' order: a dictionary's order differs from one process to the next.
        let groups = Dictionary(grouping: records.indices) { records[$0].derived.last?.folded ?? "" }
            .filter { !$0.key.isEmpty && $0.value.count >= 2 }.sorted { $0.key < $1.key }.map(\.value)
        var cumulative: [Int] = []
        for group in groups { cumulative.append((cumulative.last ?? 0) + group.count * (group.count - 1) / 2) }
        guard let total = cumulative.last else { return [] }
        let pairs = (0..<sampleSize).map { _ in
            let pick = random.int(0...(total - 1))
            var low = 0
            var high = cumulative.count - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] > pick { high = middle } else { low = middle + 1 }
            }
            let group = groups[low]
            let a = random.int(0...(group.count - 1))
            var b = random.int(0...(group.count - 2))
            if b >= a { b += 1 }
            return (group[a], group[b])
        }
        return Comparison.compare(pairs: pairs, of: records)
    }

    /// Shares from counts per level, each at least `floor` (what one sighting in the sample would
    /// give): a level never seen among random pairs (two equal system addresses) gets a weight,
    /// not infinity.
    private static func flooredU(_ counts: [[Double]], fallback: [[Double]], floor: Double) -> [[Double]] {
        zip(counts, fallback).map { counts, fallback in
            let sum = counts.reduce(0, +)
            guard sum > 0 else { return fallback }
            let floored = counts.map { max($0 / sum, floor) }
            let flooredSum = floored.reduce(0, +)
            return floored.map { $0 / flooredSum }
        }
    }

    /// Re-estimates everything from an app's own records: `u` from random pairs, then `m`, the prior
    /// and duplicates per record by EM on the candidate pairs, starting from `self`.
    public func estimated(from records: [MatchFeatures]) -> MatchModel {
        estimated(sample: records, others: [], storeSize: records.count)
    }

    /// Re-estimates the model on a sample of a store of `storeSize` records: `u` from random pairs
    /// of all the records given, then `m`, the prior and duplicates per record by EM on the
    /// candidate pairs of the sample among itself and with `others` (the stored records that share
    /// a blocking key with one of the sample, the sample left out), starting from `self`. Each
    /// record of the sample meets all of its candidates, so its pairs are those of the whole store
    /// and the duplicates per record are the store's.
    public func estimated(sample: [MatchFeatures], others: [MatchFeatures], storeSize: Int) -> MatchModel {
        var deduplicator = Deduplicator(model: self)
        deduplicator.wideBlocking = false
        let within = deduplicator.pairs(in: sample, minProbability: 0).map(\.comparison)
        let between = deduplicator.pairs(between: sample, and: others, minProbability: 0).map(\.comparison)
        let records = sample + others
        let relatives = Self.relativePairs(records, sampleSize: 50_000, seed: 1)
        var model = withRandomPairU(from: records, relatives: relatives).estimated(
            from: within + between, recordCount: storeSize)
        // A pair inside the sample is a duplicate of two of its records, a pair with another record of one.
        model.duplicatesPerRecord = model.prior * Double(2 * within.count + between.count) / Double(max(sample.count, 1))
        // The household of relatives measured again without the pairs the model takes for one
        // person: a few rounds, each with the weights the last one gave.
        for _ in 0..<3 { model = model.withRelativesU(relatives, weighing: model.scaled(toRecords: storeSize)) }
        return model
    }
}
