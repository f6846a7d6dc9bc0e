import Foundation
import Testing

@testable import NameMatching

/// Accuracy on generated data with known truth. The figures in BENCHMARKS.md come from
/// `printQualityFigures` (run with NAMES_PRINT_FIGURES=1).
@Suite struct MatchQualityTests {
    static let recommendedThreshold = MatchModel.recommendedThreshold

    @Test func generatorIsDeterministicAndHasDuplicates() {
        let a = SyntheticPersons(seed: 9).generate(records: 500)
        let b = SyntheticPersons(seed: 9).generate(records: 500)
        #expect(a.records == b.records)
        #expect(a.entityIDs == b.entityIDs)
        #expect(a.records.count == 500)
        #expect(Set(a.entityIDs).count < 400)
        #expect(SyntheticPersons(seed: 10).generate(records: 500).records != a.records)
    }

    @Test func emRecoversTheParametersOfLabelledPairs() {
        let data = SyntheticPersons(seed: 3).generate(records: 5_000)
        var deduplicator = Deduplicator(model: .initialGuess)
        deduplicator.wideBlocking = false
        let pairs = deduplicator.pairs(in: data.features, minProbability: 0)
        let estimated = MatchModel.initialGuess.estimated(from: pairs.map(\.comparison), recordCount: 5_000)
        // The parameters counted from the truth, among the same candidate pairs.
        let truth = MatchModel.counted(pairs: pairs, entityIDs: data.entityIDs)
        #expect(abs(estimated.prior - truth.prior) < 0.03, "prior \(estimated.prior) vs \(truth.prior)")
        // Factors the generator never fills (postal codes) have nothing to recover.
        let present = Set(
            pairs.flatMap { MatchModel.factorLevels($0.comparison).enumerated().filter { $0.element > 0 }.map(\.offset) })
        for (factor, name) in MatchModel.factors.enumerated() where present.contains(factor) {
            for level in 0..<MatchModel.factorLevelCounts[factor] {
                let (m, trueM) = (estimated.m[factor][level], truth.m[factor][level])
                let (u, trueU) = (estimated.candidateU[factor][level], truth.u[factor][level])
                #expect(abs(m - trueM) < 0.1, "m \(name) level \(level + 1): \(m) vs \(trueM)")
                #expect(abs(u - trueU) < 0.1, "u \(name) level \(level + 1): \(u) vs \(trueU)")
            }
        }
        let truePairsPerRecord = Double(pairs.filter { data.entityIDs[$0.a] == data.entityIDs[$0.b] }.count) * 2 / 5_000
        #expect(abs(estimated.duplicatesPerRecord - truePairsPerRecord) < 0.1)
    }

    @Test func fiveThousandRecordsAreMatchedAccuratelyAndCalibrated() {
        let data = SyntheticPersons(seed: 2).generate(records: 5_000)
        let features = data.features
        let pairs = Deduplicator().pairs(in: features, minProbability: 0)
        let quality = LinkageQuality(pairs: pairs, entityIDs: data.entityIDs, threshold: Self.recommendedThreshold)
        #expect(quality.f1 >= 0.95, "\(quality.report)")
        for band in quality.calibration where band.pairs >= 50 {
            #expect(abs(band.shareTrue - band.meanProbability) <= 0.1, "\(quality.report)")
        }
        // Re-estimated on the set itself (what an app does with its own records), as good.
        let model = MatchModel.standard.estimated(from: features)
        let again = LinkageQuality(
            pairs: Deduplicator(model: model).pairs(in: features, minProbability: 0.3), entityIDs: data.entityIDs,
            threshold: Self.recommendedThreshold)
        #expect(again.f1 >= 0.95, "\(again.report)")
    }

    @Test func recordsWithoutACommonAddressStillMatch() {
        let a = PersonRecord(
            firstName: "Margaret", lastName: "Thistlewood", addresses: [MatchAddress(type: "physical", value: "14 Orchard Lane")],
            birthday: "1971-03-09", location: "York")
        let b = PersonRecord(
            firstName: "Peggy", lastName: "Thistlewood",
            addresses: [
                MatchAddress(type: "physical", value: "14 Orchard Ln, York"),
                MatchAddress(type: "email", value: "peggy@example.org"),
            ], birthday: "1971-03-09", location: "York")
        let probability = MatchModel.standard.probability(Comparison.compare(MatchFeatures(a), MatchFeatures(b)))
        #expect(probability > 0.95)
        var stranger = b
        stranger.firstName = "Oliver"
        stranger.birthday = "1990-11-30"
        stranger.addresses = []
        #expect(MatchModel.standard.probability(Comparison.compare(MatchFeatures(a), MatchFeatures(stranger))) < 0.5)
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["NAMES_PRINT_MODEL"] != nil))
    func printStandardParameters() {
        print(MatchModel.estimatedOnSyntheticData().swiftSource)
    }
}

/// Prints the figures recorded in BENCHMARKS.md: quality at the recommended threshold, the
/// calibration table, comparisons per record, and timings for 10,000 and 100,000 records. Meant for
/// a release build: `NAMES_PRINT_FIGURES=1 swift test -c release --filter printQualityFigures`.
@Suite struct MatchFiguresTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["NAMES_PRINT_FIGURES"] != nil))
    func printQualityFigures() {
        let data = SyntheticPersons(seed: 2).generate(records: 5_000)
        let features = data.features
        let model = MatchModel.standard.estimated(from: features)
        for (name, model) in [("standard model", MatchModel.standard), ("re-estimated by EM on the set", model)] {
            let pairs = Deduplicator(model: model).pairs(in: features, minProbability: 0)
            let quality = LinkageQuality(pairs: pairs, entityIDs: data.entityIDs, threshold: MatchModel.recommendedThreshold)
            print("5,000 records, \(name):\n\(quality.report)\n")
        }
        for count in [10_000, 100_000] {
            let data = SyntheticPersons(seed: 4).generate(records: count)
            // Processor time of the whole process (both cores), and time on the clock.
            func cpu() -> Double { Double(clock()) / Double(CLOCKS_PER_SEC) }
            let wall = ContinuousClock()
            var features: [MatchFeatures] = []
            var pairs: [ScoredPair] = []
            let cpu0 = cpu()
            let featureTime = wall.measure { features = data.features }
            let cpu1 = cpu()
            let pairTime = wall.measure { pairs = Deduplicator().pairs(in: features, minProbability: 0) }
            let cpu2 = cpu()
            let quality = LinkageQuality(pairs: pairs, entityIDs: data.entityIDs, threshold: MatchModel.recommendedThreshold)
            print(
                "\(count) records: features \(featureTime) (CPU \(cpu1 - cpu0) s), blocking + comparing \(pairTime) "
                    + "(CPU \(cpu2 - cpu1) s), \(pairs.count) candidate pairs (\(Double(pairs.count) / Double(count)) per record)\n"
                    + quality.report + "\n")
        }
    }
}
