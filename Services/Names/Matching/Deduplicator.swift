import Foundation

/// A candidate pair, by index into the record lists it came from.
public struct ScoredPair: Hashable, Sendable {
    public var a: Int
    public var b: Int
    public var comparison: Comparison
    public var probability: Double
    public init(a: Int, b: Int, comparison: Comparison, probability: Double) {
        self.a = a
        self.b = b
        self.comparison = comparison
        self.probability = probability
    }
}

/// Finds and scores the candidate pairs of a set of records.
///
/// Cost: every record gets at most 15 blocking keys (``MatchFeatures/blockingKeys``); a dictionary
/// from key to records makes the blocks in one pass, and each record is compared once with each
/// other record of its blocks (a pair met in several blocks is compared once). Blocks of more than
/// ``maximumBlockSize`` records are skipped: they come from keys too common to mean anything (a
/// very common name in a big city, an `info@` mailbox), and the other keys of a true pair still meet.
/// So comparisons grow linearly with the number of records, at most `15 × maximumBlockSize` per
/// record, as long as the keys spread: measured on generated data, 2 per record at 10,000 records
/// and 15 at 100,000 (BENCHMARKS.md). As data grows more blocks pass the cap and are dropped, which
/// costs recall only for pairs that have no other key in common.
public struct Deduplicator: Sendable {
    public var model: MatchModel
    /// Blocks holding more records than this (100 by default) are not compared within.
    public var maximumBlockSize: Int
    /// Whether probabilities are for a set of the records passed in (the default; at least the
    /// model's ``MatchModel/recordCount``), or for a set of the model's own count whatever is passed:
    /// a store that compares new records with a few candidates at a time wants the same probability
    /// for a pair however the records reached it.
    public var scalesWithRecords = true
    /// Whether the wide blocking keys are used (the default), or only those a model is estimated
    /// on (``MatchFeatures/estimationBlockingKeys``).
    public var wideBlocking = true

    public init(model: MatchModel = .standard) { self.init(model: model, maximumBlockSize: 100) }

    public init(model: MatchModel, maximumBlockSize: Int) {
        self.model = model
        self.maximumBlockSize = maximumBlockSize
    }

    /// Every candidate pair inside `records` (`a < b`) at or above `minProbability`. Probabilities are
    /// for a set of `records.count` records, or of the model's ``MatchModel/recordCount`` if that is
    /// more: the chance of a namesake depends on how many people there are to be confused with, and a
    /// short list (an address book, candidates fetched by key) is drawn from a bigger population.
    /// Set the model's count to the size of the store (``MatchModel/scaled(toRecords:)``) when the
    /// records are a part of it.
    public func pairs(in records: [MatchFeatures], minProbability: Double) -> [ScoredPair] {
        let index = BlockIndex(records.map { BlockingKeys.keys($0.derived, wide: wideBlocking) })
        let weights = weights(records: records.count)
        return scorePairs(count: records.count, rightCount: records.count, weights: weights, minProbability: minProbability) {
            i, visit in
            for block in index.blocksOfRecord[i] {
                let members = index.members[Int(block)]
                guard members.count <= maximumBlockSize else { continue }
                for j in members where Int(j) > i { visit(Int(j)) }
            }
        } compare: { [derived = records.map(\.derived)] i, j in
            Comparison.compare(derived[i], derived[j])
        }
    }

    /// Every candidate pair between `new` (`a`, index into `new`) and `existing` (`b`) at or above
    /// `minProbability`. Probabilities are for a set of all the records of both lists, or of the model's
    /// ``MatchModel/recordCount`` if that is more (see ``pairs(in:minProbability:)``).
    public func pairs(between new: [MatchFeatures], and existing: [MatchFeatures], minProbability: Double) -> [ScoredPair] {
        let index = BlockIndex(existing.map { BlockingKeys.keys($0.derived, wide: wideBlocking) })
        let weights = weights(records: new.count + existing.count)
        return scorePairs(count: new.count, rightCount: existing.count, weights: weights, minProbability: minProbability) {
            i, visit in
            for key in BlockingKeys.keys(new[i].derived, wide: wideBlocking) {
                guard let block = index.blockOfKey[BlockIndex.hash(key)] else { continue }
                let members = index.members[Int(block)]
                guard members.count <= maximumBlockSize else { continue }
                for j in members { visit(Int(j)) }
            }
        } compare: { [left = new.map(\.derived), right = existing.map(\.derived)] i, j in
            Comparison.compare(left[i], right[j])
        }
    }

    private func weights(records: Int) -> MatchModel.Weights {
        MatchModel.Weights(scalesWithRecords ? model.scaled(toRecords: max(records, model.recordCount)) : model)
    }

    /// How many distinct candidate pairs `records` have, without scoring them.
    public func candidateCount(in records: [MatchFeatures]) -> Int {
        let index = BlockIndex(records.map { BlockingKeys.keys($0.derived, wide: wideBlocking) })
        var stamp = [Int](repeating: -1, count: records.count)
        var count = 0
        for i in 0..<records.count {
            for block in index.blocksOfRecord[i] {
                let members = index.members[Int(block)]
                guard members.count <= maximumBlockSize else { continue }
                for j in members where Int(j) > i && stamp[Int(j)] != i {
                    stamp[Int(j)] = i
                    count += 1
                }
            }
        }
        return count
    }

    /// Runs `candidates` for every left-hand index in parallel chunks, compares each right-hand index
    /// once per left-hand one, and keeps the pairs at or above `minProbability`, in index order.
    private func scorePairs(
        count: Int, rightCount: Int, weights: MatchModel.Weights, minProbability: Double,
        candidates: @escaping @Sendable (Int, (Int) -> Void) -> Void,
        compare: @escaping @Sendable (Int, Int) -> Comparison
    ) -> [ScoredPair] {
        guard count > 0 else { return [] }
        let chunkSize = 2048
        let chunks = (count + chunkSize - 1) / chunkSize
        let results = ResultSlots<ScoredPair>(chunks)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            var found: [ScoredPair] = []
            var stamp = [Int32](repeating: -1, count: rightCount)
            for i in chunk * chunkSize..<min(count, (chunk + 1) * chunkSize) {
                candidates(i) { j in
                    guard stamp[j] != Int32(i) else { return }
                    stamp[j] = Int32(i)
                    let comparison = compare(i, j)
                    let probability = weights.probability(comparison)
                    if probability >= minProbability {
                        found.append(ScoredPair(a: i, b: j, comparison: comparison, probability: probability))
                    }
                }
            }
            results.set(chunk, found)
        }
        return results.all.flatMap { $0 }
    }
}

/// Records by blocking key: `members[block]` are the records holding that key.
struct BlockIndex {
    /// Keys by a 64-bit hash of their text, which hashes faster than the strings; two keys that
    /// collide only make one block of two, which costs comparisons, never a pair.
    var blockOfKey: [UInt64: Int32] = [:]
    var members: [[Int32]] = []
    var blocksOfRecord: [[Int32]] = []

    init(_ keysOfRecords: [[String]]) {
        blocksOfRecord.reserveCapacity(keysOfRecords.count)
        for (record, keys) in keysOfRecords.enumerated() {
            var blocks: [Int32] = []
            for key in keys {
                let block: Int32
                let hash = Self.hash(key)
                if let known = blockOfKey[hash] {
                    block = known
                } else {
                    block = Int32(members.count)
                    blockOfKey[hash] = block
                    members.append([])
                }
                if members[Int(block)].last != Int32(record) {
                    members[Int(block)].append(Int32(record))
                    blocks.append(block)
                }
            }
            blocksOfRecord.append(blocks)
        }
    }

    /// FNV-1a over the key's UTF-8 bytes.
    static func hash(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// One slot per parallel chunk, each written by one worker only.
final class ResultSlots<Element: Sendable>: @unchecked Sendable {
    private var slots: [[Element]]
    private let lock = NSLock()
    init(_ count: Int) { slots = Array(repeating: [], count: count) }
    func set(_ index: Int, _ value: [Element]) {
        lock.lock()
        slots[index] = value
        lock.unlock()
    }
    var all: [[Element]] { slots }
}

extension Comparison {
    /// The comparisons of `pairs` (indexes into `records`), in order, in parallel chunks.
    static func compare(pairs: [(Int, Int)], of records: [MatchFeatures]) -> [Comparison] {
        let chunkSize = 4096
        let chunks = (pairs.count + chunkSize - 1) / chunkSize
        let results = ResultSlots<Comparison>(chunks)
        let derived = records.map(\.derived)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let range = chunk * chunkSize..<min(pairs.count, (chunk + 1) * chunkSize)
            results.set(chunk, pairs[range].map { compare(derived[$0.0], derived[$0.1]) })
        }
        return results.all.flatMap { $0 }
    }
}
