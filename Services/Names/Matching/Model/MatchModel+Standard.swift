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
    static let prior = 0.234466
    static let duplicatesPerRecord = 0.999715
    static let recordCount = 1000
    static let calibration = [0.791354, 0.517661]
    static let m: [[Double]] = [
        [
            0.474288, 0.158616, 0.0484534, 0.118466, 0.0295512, 0.0101954, 0.0131762, 0.00703372, 0.000964074, 0.043428,
            0.0585596, 0.0118072, 0.0254614,
        ],
        [0.712334, 0.0722985, 0.123627, 0.0742356, 0.0175046],
        [0.807017, 0.0568146, 0.136168],
        [0.85926, 0.14074],
        [0.814682, 0.0507146, 0.134604],
        [0.642857, 0.285714, 0.0714286],
        [0.633227, 0.0463423, 9.999e-05, 0.320331],
        [0.79259, 0.0523385, 0.0118108, 0.14326],
        [0.793685, 0.0538325, 0.0155906, 0.136892],
        [0.904294, 0.0956057, 9.99901e-05],
        [0.914096, 0.0858044, 9.99901e-05],
        [0.9999, 0.0001],
        [0.394855, 0.00358907, 0.467626, 0.13393],
        [0.841411, 0.0366837, 0.00883278, 0.113072],
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
        [0.145065, 0.00818665, 0.438827, 0.407922],
        [0.0436393, 0.00416349, 0.00108301, 0.951114],
    ]
    static let candidateU: [[Double]] = [
        [
            0.0693013, 0.0365712, 0.0116007, 0.0259862, 0.0296432, 0.0106747, 0.317383, 0.139643, 0.12507, 0.0165708, 0.0119424,
            0.00871034, 0.196903,
        ],
        [0.110088, 0.000246282, 0.0420868, 0.0287749, 0.818804],
        [0.312654, 0.000899507, 0.686446],
        [0.238523, 0.761477],
        [0.250634, 0.00473624, 0.744629],
        [0.0714286, 0.285714, 0.642857],
        [0.284388, 9.99902e-05, 0.00543647, 0.710076],
        [0.000477968, 9.99931e-05, 0.00137077, 0.998051],
        [0.00245692, 0.000113527, 0.000418908, 0.997011],
        [9.99903e-05, 9.99903e-05, 0.9998],
        [9.999e-05, 9.999e-05, 0.9998],
        [0.725563, 0.274437],
        [0.145065, 0.00818665, 0.438827, 0.407922],
        [0.0436393, 0.00416349, 0.00108301, 0.951114],
    ]
}
