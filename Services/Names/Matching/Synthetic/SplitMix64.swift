import Foundation

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, seedable generator, so that synthetic data
/// is the same on every machine and run for a seed, which Foundation's random numbers are not.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

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
