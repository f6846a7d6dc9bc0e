extension MatchModel {
    /// Estimated offline on synthetic data; what an app starts with.
    public static let standard = MatchModel(
        prior: StandardParameters.prior, m: StandardParameters.m, u: StandardParameters.u,
        candidateU: StandardParameters.candidateU, duplicatesPerRecord: StandardParameters.duplicatesPerRecord,
        recordCount: StandardParameters.recordCount, calibration: StandardParameters.calibration)

    /// A neutral starting point for EM when no model is known: the strongest level of each factor
    /// likely among matches and rare among non-matches, disagreement the reverse.
    public static var initialGuess: MatchModel {
        func spread(_ count: Int, strongFirst: Bool) -> [Double] {
            let raw = (0..<count).map { index -> Double in
                let step = Double(strongFirst ? count - index : index + 1)
                return step * step
            }
            let sum = raw.reduce(0, +)
            return raw.map { $0 / sum }
        }
        return MatchModel(
            prior: 0.1, m: factorLevelCounts.map { spread($0, strongFirst: true) },
            u: factorLevelCounts.map { spread($0, strongFirst: false) })
    }
}

// The standard model's parameters: `u` from random pairs and EM on the candidate pairs of 10,000
// synthetic records (seed 1), then the calibration fitted to their truth. To regenerate them (after
// any change to comparison, blocking or the generator), run
// `NAMES_PRINT_MODEL=1 swift test --filter printStandardParameters` (it prints
// `MatchModel.estimatedOnSyntheticData().swiftSource`), paste its output over this enum and run
// `swift format` on the file.
enum StandardParameters {
    static let prior = 0.0144026
    static let duplicatesPerRecord = 1.05824
    static let recordCount = 1000
    static let calibration = [0.858842, 0.093565]
    static let m: [[Double]] = [
        [
            0.470661, 0.15806, 0.0490253, 0.121343, 0.030732, 0.0102535, 0.0150543, 0.00732294, 0.00174213, 0.0433446, 0.0572615,
            0.011663, 0.0235369,
        ],
        [0.707178, 0.0714818, 0.123787, 0.0745633, 0.022989],
        [0.810218, 0.0542784, 0.135504],
        [0.824681, 0.175319],
        [0.785207, 0.048397, 0.166396],
        [0.642857, 0.285714, 0.0714286],
        [0.633659, 0.0473117, 9.999e-05, 0.318929],
        [0.765117, 0.050571, 0.0124713, 0.171841],
        [0.77367, 0.0518863, 0.0151224, 0.159321],
        [0.904234, 0.095666, 9.99901e-05],
        [0.914152, 0.0857481, 9.99902e-05],
        [0.9999, 0.0001],
        [0.621105, 0.283809, 0.0950853],
    ]
    static let u: [[Double]] = [
        [
            6.0129e-05, 4.0086e-05, 5.01075e-06, 2.50537e-05, 3.00645e-05, 2.0043e-05, 0.00591769, 0.00169363, 0.00859343,
            0.000370795, 0.000145312, 0.000566215, 0.982533,
        ],
        [9.11794e-05, 0.000329649, 0.00173241, 0.0228229, 0.975024],
        [0.00824155, 0.00105512, 0.990703],
        [0.00259926, 0.997401],
        [0.0279783, 0.0017849, 0.970237],
        [0.0714286, 0.285714, 0.642857],
        [0.042754, 0.000541761, 0.00609481, 0.950609],
        [9.24953e-05, 4.99995e-06, 4.99995e-06, 0.999898],
        [8.49181e-05, 1.4153e-05, 4.99998e-06, 0.999896],
        [0.000450448, 4.99998e-06, 0.999545],
        [4.99995e-06, 4.99995e-06, 0.99999],
        [0.502149, 0.497851],
        [0.00299401, 0.0299401, 0.967066],
    ]
    static let candidateU: [[Double]] = [
        [
            0.00279479, 0.00152887, 0.000486602, 0.0014927, 0.00254976, 0.00132047, 0.315605, 0.180968, 0.177758, 0.0199075,
            0.0161231, 0.0116017, 0.267863,
        ],
        [0.00519854, 0.000242014, 0.0025822, 0.0223583, 0.969619],
        [0.0171655, 0.000914954, 0.981919],
        [0.0110943, 0.988906],
        [0.497711, 0.0123823, 0.489907],
        [0.0714286, 0.285714, 0.642857],
        [0.0450585, 0.000520584, 0.00559432, 0.948827],
        [9.9982e-05, 9.9982e-05, 0.000627059, 0.999173],
        [9.998e-05, 9.998e-05, 9.998e-05, 0.9997],
        [9.999e-05, 9.999e-05, 0.9998],
        [9.999e-05, 9.999e-05, 0.9998],
        [0.659678, 0.340322],
        [0.00580353, 0.0327768, 0.96142],
    ]
}
