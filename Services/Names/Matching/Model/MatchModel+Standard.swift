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
    static let prior = 0.230538
    static let duplicatesPerRecord = 0.982968
    static let recordCount = 1000
    static let calibration = [0.783921, 0.537751]
    static let m: [[Double]] = [
        [
            0.482185, 0.160155, 0.0498029, 0.12008, 0.0295677, 0.0101911, 0.0117453, 0.00539307, 0.000567448, 0.0444152, 0.057514,
            0.0118698, 0.0165143,
        ],
        [0.71463, 0.0730911, 0.125242, 0.073757, 0.0132799],
        [0.809696, 0.0559147, 0.13439],
        [0.266172, 0.384484, 0.0823785, 0.0621624, 0.204803],
        [0.80604, 0.0531555, 0.0122606, 0.128544],
        [0.794075, 0.0527713, 0.0155309, 0.137622],
        [0.903789, 0.0961114, 9.99901e-05],
        [0.914069, 0.0858309, 9.99901e-05],
        [0.9999, 0.0001],
    ]
    static let u: [[Double]] = [
        [
            6.0129e-05, 4.0086e-05, 5.01075e-06, 2.50537e-05, 3.00645e-05, 2.0043e-05, 0.00591769, 0.00169363, 0.00859343,
            0.000370795, 0.000145312, 0.000566215, 0.982533,
        ],
        [9.11794e-05, 0.000329649, 0.00173241, 0.0228229, 0.975024],
        [0.00824652, 0.00105329, 0.9907],
        [6.14351e-05, 0.00012287, 5.11959e-05, 3.07176e-05, 0.999734],
        [9.24953e-05, 4.99995e-06, 4.99995e-06, 0.999898],
        [8.47513e-05, 2.82504e-05, 4.99998e-06, 0.999882],
        [0.000450448, 4.99998e-06, 0.999545],
        [4.99995e-06, 4.99995e-06, 0.99999],
        [0.502149, 0.497851],
    ]
    static let candidateU: [[Double]] = [
        [
            0.0690036, 0.036733, 0.0113848, 0.0259748, 0.0296378, 0.0106735, 0.31626, 0.139458, 0.124556, 0.0164124, 0.0124929,
            0.00870741, 0.198706,
        ],
        [0.11074, 0.00018883, 0.0418341, 0.0289945, 0.818243],
        [0.357611, 0.00253189, 0.639857],
        [0.0692844, 0.119266, 0.0525733, 0.0180844, 0.740792],
        [0.00030563, 9.99942e-05, 0.00128115, 0.998313],
        [0.0157371, 0.00115824, 0.000526868, 0.982578],
        [0.0074678, 9.99915e-05, 0.992432],
        [9.99903e-05, 9.99903e-05, 0.9998],
        [0.726554, 0.273446],
    ]
}
