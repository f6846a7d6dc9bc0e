import Foundation

/// Fellegi-Sunter m and u probabilities per factor and level, and how many duplicates a record has.
///
/// `m[factor][level - 1]` is the probability of that level among pairs of records of one person, `u`
/// among pairs of different people (factors: ``factors``); a missing factor (level 0) weighs nothing.
/// The factors are taken as independent given the match status (the model's simplification), so a
/// pair's odds are the prior odds times the product of `m/u` over its factors.
///
/// Why two sets of u: candidate pairs are chosen by blocking because they agree on something, so
/// among them agreements are not independent (a pair found through its birthday rarely shares the
/// name too). `u` is therefore measured on random pairs, where they are, and used for scoring;
/// `candidateU` is the u among candidate pairs that EM needs to tell matches from non-matches there.
/// The prior is the chance that two random records are one person: duplicates per record over the
/// number of other records, so the same evidence counts for less in a bigger set of records, where a
/// namesake is likelier.
public struct MatchModel: Hashable, Sendable, Codable {
    /// Share of matches among candidate pairs (λ), as EM found it.
    public var prior: Double
    public var m: [[Double]]
    /// u among random pairs: what scoring uses.
    public var u: [[Double]]
    /// u among candidate pairs: what EM uses.
    public var candidateU: [[Double]]
    /// Other records of the same person per record (twice the true pairs over the records): with
    /// the number of records it sets the prior.
    public var duplicatesPerRecord: Double
    /// The number of records the probabilities are for (see ``scaled(toRecords:)``), and the least
    /// that ``Deduplicator`` assumes: 1,000 in the standard model.
    public var recordCount: Int
    /// Slope and intercept that turn the model's log odds into calibrated ones (Platt scaling),
    /// fitted on labelled synthetic data (``calibrated(pairs:entityIDs:)``): the independence the
    /// model assumes does not hold for relatives and namesakes, which share several fields at once,
    /// and this corrects the confidence that costs.
    public var calibration: [Double]

    /// The standard model (``standard``).
    public init() { self = Self.standard }

    public init(
        prior: Double, m: [[Double]], u: [[Double]], candidateU: [[Double]]? = nil, duplicatesPerRecord: Double = 0.5,
        recordCount: Int = 10_000, calibration: [Double] = [1, 0]
    ) {
        self.prior = prior
        self.m = m
        self.u = u
        self.candidateU = candidateU ?? u
        self.duplicatesPerRecord = duplicatesPerRecord
        self.recordCount = recordCount
        self.calibration = calibration
    }

    enum CodingKeys: String, CodingKey {
        case prior, m, u, candidateU, duplicatesPerRecord, recordCount, calibration
    }

    /// Decodes a stored model, refusing one whose tables do not have the shape of this version's
    /// factors and levels (a model stored by another version): scoring with it would be wrong.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            prior: try container.decode(Double.self, forKey: .prior), m: try container.decode([[Double]].self, forKey: .m),
            u: try container.decode([[Double]].self, forKey: .u),
            candidateU: try container.decode([[Double]].self, forKey: .candidateU),
            duplicatesPerRecord: try container.decode(Double.self, forKey: .duplicatesPerRecord),
            recordCount: try container.decode(Int.self, forKey: .recordCount),
            calibration: try container.decode([Double].self, forKey: .calibration))
        let shape = Self.factorLevelCounts
        guard [m, u, candidateU].allSatisfy({ $0.map(\.count) == shape }), calibration.count == 2 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a match model of another shape than \(shape)"))
        }
    }

    /// The same model for a set of `count` records (the prior follows the set's size).
    public func scaled(toRecords count: Int) -> MatchModel {
        var model = self
        model.recordCount = max(2, count)
        return model
    }

    /// The chance that two records of a set of ``recordCount`` are one person before comparing them.
    public var pairPrior: Double { min(0.5, max(1e-9, duplicatesPerRecord / Double(max(recordCount, 2) - 1))) }

    /// The calibrated probability that a pair with this comparison is one person, for records of a
    /// set of ``recordCount`` records.
    public func probability(_ comparison: Comparison) -> Double {
        Self.logistic(calibration[0] * logOdds(comparison) + calibration[1])
    }

    /// The natural log of the model's posterior odds of a match, before calibration: prior log odds
    /// plus each factor's weight.
    public func logOdds(_ comparison: Comparison) -> Double {
        Self.factorLevels(comparison).enumerated().reduce(log(pairPrior / (1 - pairPrior))) {
            $0 + weight(factor: $1.offset, level: $1.element)
        }
    }

    /// The weight of one factor (index into ``factors``) at one level: log(m/u), positive for evidence
    /// of a match, 0 for a missing one.
    public func weight(factor: Int, level: Int) -> Double {
        guard level > 0 else { return 0 }
        if let base = Self.removedLevels[factor], base.removed == level {
            return Self.removedDiscount * weight(factor: factor, level: base.same)
        }
        return log(m[factor][level - 1] / u[factor][level - 1])
    }

    /// Per address factor, the level "the same, but marked removed" and the level it discounts.
    /// Its weight is not estimated: an address its owner marked removed is by decision worth half
    /// of one in use (the owner says it is no longer theirs, or no longer used). The factors: email,
    /// phone, system, handle and the phone of relatives.
    static let removedLevels: [Int: (removed: Int, same: Int)] = [7: (2, 1), 8: (2, 1), 9: (2, 1), 10: (2, 1), 13: (2, 1)]
    static let removedDiscount = 0.5

    /// The weight of one field's level with the other fields missing (for a name, the other name
    /// missing).
    public func weight(_ field: MatchField, level: Int) -> Double {
        var comparison = Comparison(levels: [])
        comparison[field] = Int8(level)
        return logOdds(comparison) - log(pairPrior / (1 - pairPrior))
    }

    static func logistic(_ x: Double) -> Double { 1 / (1 + exp(-x)) }

    /// Log weights per factor and level and the prior log odds, for scoring many pairs with table
    /// look-ups only.
    struct Weights: Sendable {
        let prior: Double
        let slope: Double
        let intercept: Double
        let names: [Double]  // first * 7 + last
        let fields: [Double]  // field * 16 + level, fields after the names; 0 for fields not weighed
        /// The same for pairs whose names could be relatives': the household's fields left out,
        /// the phone weighed as a relative's.
        let relativeFields: [Double]
        /// The home of possible relatives, by level (index 0: missing).
        let home: [Double]

        init(_ model: MatchModel) {
            prior = log(model.pairPrior / (1 - model.pairPrior))
            (slope, intercept) = (model.calibration[0], model.calibration[1])
            names = MatchModel.nameTable.map { model.weight(factor: 0, level: $0) }
            var fields = [Double](repeating: 0, count: MatchField.allCases.count * 16)
            for (index, field) in MatchModel.factorFields.enumerated() {
                for level in 1...field.levelCount {
                    fields[field.rawValue * 16 + level] = model.weight(factor: index + 1, level: level)
                }
            }
            var relativeFields = fields
            for field in MatchModel.householdFields {
                for level in 1...field.levelCount { relativeFields[field.rawValue * 16 + level] = 0 }
            }
            let homeFactor = 1 + MatchModel.factorFields.count
            for level in 1...MatchField.phone.levelCount {
                relativeFields[MatchField.phone.rawValue * 16 + level] = model.weight(factor: homeFactor + 1, level: level)
            }
            self.fields = fields
            self.relativeFields = relativeFields
            home = (0...MatchModel.homeLevels.count).map { model.weight(factor: homeFactor, level: $0) }
        }

        func logOdds(_ comparison: Comparison) -> Double {
            let packed = comparison.pattern
            let nameLevel = MatchModel.nameTable[Int(packed & 0xF) * 7 + Int((packed >> 4) & 0xF)]
            var total = prior + names[Int(packed & 0xF) * 7 + Int((packed >> 4) & 0xF)]
            let relatives = (1 << UInt64(nameLevel)) & MatchModel.relativeLevelFlags != 0
            let table = relatives ? relativeFields : fields
            if relatives { total += home[MatchModel.homeLevel(comparison)] }
            var rest = packed >> 8
            var field = 2
            while rest != 0 {
                total += table[field * 16 + Int(rest & 0xF)]
                rest >>= 4
                field += 1
            }
            return total
        }

        func probability(_ comparison: Comparison) -> Double {
            MatchModel.logistic(slope * logOdds(comparison) + intercept)
        }
    }
}
