import Foundation

extension MatchModel {
    /// Estimates a model on synthetic data (``SyntheticPersons``): `u` from random pairs and EM on
    /// the candidate pairs of `records` generated records starting from ``initialGuess``, then the
    /// calibration fitted to the data's truth. This is how ``standard`` was made.
    public static func estimatedOnSyntheticData(records: Int = 10_000, seed: UInt64 = 1) -> MatchModel {
        let data = SyntheticPersons(seed: seed).generate(records: records)
        let features = data.features
        var model = initialGuess.estimated(from: features)
        // The standard model knows nothing of the store it starts in, so it must not make one person
        // of a family: it weighs a shared home of possible relatives by how often one occurs among
        // candidate pairs with such names (relatives among them), not among random pairs sharing a
        // last name (mostly strangers). An app's own estimate measures the latter on its records.
        for factor in (1 + factorFields.count)..<factors.count { model.u[factor] = model.candidateU[factor] }
        let pairs = Deduplicator(model: model).pairs(in: features, minProbability: 0)
        // Probabilities are then for at least a thousand records: what a short list stands for.
        return model.calibrated(pairs: pairs, entityIDs: data.entityIDs).scaled(toRecords: 1_000)
    }

    /// The model as Swift source for `StandardParameters`.
    public var swiftSource: String {
        func rows(_ table: [[Double]]) -> String {
            table.map { "        [" + $0.map { String(format: "%.6g", $0) }.joined(separator: ", ") + "]," }
                .joined(separator: "\n")
        }
        return """
            enum StandardParameters {
                static let prior = \(String(format: "%.6g", prior))
                static let duplicatesPerRecord = \(String(format: "%.6g", duplicatesPerRecord))
                static let recordCount = \(recordCount)
                static let calibration = [\(calibration.map { String(format: "%.6g", $0) }.joined(separator: ", "))]
                static let m: [[Double]] = [
            \(rows(m))
                ]
                static let u: [[Double]] = [
            \(rows(u))
                ]
                static let candidateU: [[Double]] = [
            \(rows(candidateU))
                ]
            }
            """
    }
}
