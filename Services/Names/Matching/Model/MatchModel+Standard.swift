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
    static let prior = 0.235444
    static let duplicatesPerRecord = 1.00389
    static let recordCount = 1000
    static let calibration = [0.793725, 0.470739]
    static let m: [[Double]] = [
        [
            0.47256, 0.158024, 0.048271, 0.11806, 0.0294577, 0.0101539, 0.0131459, 0.009654, 0.000960735, 0.0432893, 0.0591434,
            0.0117697, 0.0255097,
        ],
        [0.711165, 0.0723379, 0.123349, 0.074345, 0.0188027],
        [0.806831, 0.0568126, 0.136356],
        [0.859205, 0.140795],
        [0.814648, 0.0506985, 0.134653],
        [0.642857, 0.285714, 0.0714286],
        [0.633158, 0.0463112, 9.999e-05, 0.320431],
        [0.789286, 0.0521351, 0.0118119, 0.146767],
        [0.793533, 0.0538112, 0.0155851, 0.137071],
        [0.904295, 0.0956053, 9.99902e-05],
        [0.914095, 0.0858046, 9.99901e-05],
        [0.9999, 0.0001],
        [0.825119, 0.0620653, 0.112816],
        [0.87413, 0.12587],
        [0.856725, 0.0235833, 0.119692],
        [0.642857, 0.285714, 0.0714286],
        [0.697869, 0.0292634, 9.999e-05, 0.272768],
        [0.843605, 0.0367928, 0.00895668, 0.110646],
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
        [0.591201, 0.00723449, 0.401565],
        [0.312214, 0.687786],
        [0.316408, 0.0183658, 0.665227],
        [0.0714286, 0.285714, 0.642857],
        [0.523541, 0.0164888, 9.999e-05, 0.45987],
        [0.0381624, 0.00393764, 0.00101627, 0.956884],
    ]
    static let candidateU: [[Double]] = [
        [
            0.0693143, 0.0365969, 0.0116096, 0.0259926, 0.029672, 0.010688, 0.317781, 0.139007, 0.12523, 0.0165791, 0.0117031,
            0.00871793, 0.197108,
        ],
        [0.11009, 0.000199097, 0.0421187, 0.0287228, 0.818869],
        [0.312611, 0.000888644, 0.6865],
        [0.238436, 0.761564],
        [0.250551, 0.00473331, 0.744716],
        [0.0714286, 0.285714, 0.642857],
        [0.28434, 9.99902e-05, 0.00543751, 0.710123],
        [0.000537995, 9.9993e-05, 0.00135688, 0.998005],
        [0.00238429, 0.000112555, 0.000418427, 0.997085],
        [9.999e-05, 9.999e-05, 0.9998],
        [9.999e-05, 9.999e-05, 0.9998],
        [0.725437, 0.274563],
        [0.591201, 0.00723449, 0.401565],
        [0.312214, 0.687786],
        [0.316408, 0.0183658, 0.665227],
        [0.0714286, 0.285714, 0.642857],
        [0.523541, 0.0164888, 9.999e-05, 0.45987],
        [0.0381624, 0.00393764, 0.00101627, 0.956884],
    ]
}
