import Foundation
@_exported import struct LayerModels.SplitMix64

/// The draws synthetic data makes of the suite's seeded generator.
extension SplitMix64 {
    /// Uniform in 0..<1.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func pick<T>(_ values: [T]) -> T { values[Int(next() % UInt64(values.count))] }

    /// An index drawn with probability proportional to `weights`' increments (a cumulative table).
    mutating func pick(cumulative: [Double]) -> Int {
        let target = unit() * cumulative[cumulative.count - 1]
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] <= target { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Values drawn by rank with Zipf-like frequencies: the first ones common, the tail rare.
struct WeightedList: Sendable {
    let values: [String]
    let cumulative: [Double]

    init(_ text: String, exponent: Double = 0.9) {
        values = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { $0.replacingOccurrences(of: "_", with: " ") }
        var total = 0.0
        cumulative = values.indices.map { rank in
            total += 1 / pow(Double(rank + 1), exponent)
            return total
        }
    }

    func draw(_ random: inout SplitMix64) -> String { values[random.pick(cumulative: cumulative)] }
}
