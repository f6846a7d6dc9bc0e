import Foundation

/// How good a set of scored pairs is against the truth: precision, recall and F1 of the duplicate
/// pairs at a threshold, and how well the probabilities are calibrated.
public struct LinkageQuality: Sendable {
    /// A band of reported probabilities and what share of its pairs are true.
    public struct Band: Sendable {
        public var lower: Double
        public var upper: Double
        public var pairs: Int
        public var truePairs: Int
        public var meanProbability: Double
        /// Share of the band's pairs that are true (0 when the band is empty).
        public var shareTrue: Double { pairs == 0 ? 0 : Double(truePairs) / Double(pairs) }
    }

    public var threshold: Double
    public var truePositives: Int
    public var falsePositives: Int
    /// True pairs not reported at or above the threshold, including those blocking never proposed.
    public var falseNegatives: Int
    /// Every pair of records of one entity.
    public var allTruePairs: Int
    /// True pairs among the candidates at all (what blocking found), whatever their probability.
    public var candidateTruePairs: Int
    public var calibration: [Band]

    public var precision: Double { ratio(truePositives, truePositives + falsePositives) }
    public var recall: Double { ratio(truePositives, allTruePairs) }
    public var f1: Double { precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall) }
    /// Share of all true pairs that blocking proposed.
    public var blockingRecall: Double { ratio(candidateTruePairs, allTruePairs) }

    public static let bandEdges: [Double] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0]

    /// `pairs` index `entityIDs` (pairs within one set of records).
    public init(pairs: [ScoredPair], entityIDs: [Int], threshold: Double) {
        self.threshold = threshold
        var sizes: [Int: Int] = [:]
        for entity in entityIDs { sizes[entity, default: 0] += 1 }
        allTruePairs = sizes.values.reduce(0) { $0 + $1 * ($1 - 1) / 2 }
        var (tp, fp, candidates) = (0, 0, 0)
        let edges = Self.bandEdges
        var bands = (0..<(edges.count - 1)).map {
            Band(lower: edges[$0], upper: edges[$0 + 1], pairs: 0, truePairs: 0, meanProbability: 0)
        }
        for pair in pairs {
            let isTrue = entityIDs[pair.a] == entityIDs[pair.b]
            if isTrue { candidates += 1 }
            if pair.probability >= threshold {
                if isTrue { tp += 1 } else { fp += 1 }
            }
            if let band = bands.indices.last(where: { bands[$0].lower <= pair.probability }) {
                bands[band].pairs += 1
                bands[band].meanProbability += pair.probability
                if isTrue { bands[band].truePairs += 1 }
            }
        }
        for index in bands.indices where bands[index].pairs > 0 {
            bands[index].meanProbability /= Double(bands[index].pairs)
        }
        truePositives = tp
        falsePositives = fp
        falseNegatives = allTruePairs - tp
        candidateTruePairs = candidates
        calibration = bands
    }

    /// The figures as Markdown, for BENCHMARKS.md.
    public var report: String {
        var lines = [
            String(
                format:
                    "threshold %.2f: precision %.4f, recall %.4f, F1 %.4f (%d true pairs, %d found, %d false, blocking found %.4f)",
                threshold, precision, recall, f1, allTruePairs, truePositives, falsePositives, blockingRecall),
            "", "| probability | pairs | mean probability | share true |", "|---|---|---|---|",
        ]
        for band in calibration {
            lines.append(
                String(
                    format: "| %.2f–%.2f | %d | %.3f | %.3f |", band.lower, band.upper, band.pairs, band.meanProbability,
                    band.shareTrue))
        }
        return lines.joined(separator: "\n")
    }

    private func ratio(_ a: Int, _ b: Int) -> Double { b == 0 ? 0 : Double(a) / Double(b) }
}
