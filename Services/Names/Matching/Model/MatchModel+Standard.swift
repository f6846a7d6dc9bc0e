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
    static let prior = 0.23046
    static let duplicatesPerRecord = 0.982637
    static let recordCount = 1000
    static let calibration = [0.781086, 0.542639]
    static let m: [[Double]] = [
        [
            0.48218, 0.160193, 0.0498357, 0.120068, 0.0295418, 0.010207, 0.0117326, 0.00538512, 0.000720023, 0.0443195, 0.0575288,
            0.0118411, 0.0164476,
        ],
        [0.714572, 0.0730797, 0.125163, 0.07391, 0.0132753],
        [0.810224, 0.0559514, 0.133824],
        [0.267146, 0.410792, 0.072303, 0.0643448, 0.185414],
        [0.80625, 0.0531829, 0.0122405, 0.128327],
        [0.794354, 0.0527924, 0.0155311, 0.137323],
        [0.903779, 0.0961207, 9.99901e-05],
        [0.91407, 0.0858304, 9.99901e-05],
        [0.9999, 0.0001],
    ]
    static let u: [[Double]] = [
        [
            6.0129e-05, 4.0086e-05, 5.01075e-06, 2.50537e-05, 3.00645e-05, 2.0043e-05, 0.00591769, 0.00169363, 0.00859343,
            0.000370795, 0.000145312, 0.000566215, 0.982533,
        ],
        [9.11794e-05, 0.000329649, 0.00173241, 0.0228229, 0.975024],
        [0.00824652, 0.00105329, 0.9907],
        [6.14351e-05, 0.00012287, 6.14351e-05, 3.07176e-05, 0.999724],
        [9.24953e-05, 4.99995e-06, 4.99995e-06, 0.999898],
        [8.47513e-05, 2.82504e-05, 4.99998e-06, 0.999882],
        [0.000450448, 4.99998e-06, 0.999545],
        [4.99995e-06, 4.99995e-06, 0.99999],
        [0.502149, 0.497851],
    ]
    static let candidateU: [[Double]] = [
        [
            0.0690473, 0.0367343, 0.0113789, 0.0259879, 0.0296455, 0.0106687, 0.316232, 0.139446, 0.124498, 0.0164439, 0.0124931,
            0.00871631, 0.198708,
        ],
        [0.110798, 0.000196995, 0.0418607, 0.0289578, 0.818187],
        [0.357494, 0.0025252, 0.639981],
        [0.0692741, 0.120227, 0.0520222, 0.0181791, 0.740297],
        [0.00029586, 9.99937e-05, 0.00128839, 0.998316],
        [0.0156566, 0.0011521, 0.000526954, 0.982664],
        [0.00760235, 9.99915e-05, 0.992298],
        [9.99903e-05, 9.99903e-05, 0.9998],
        [0.726604, 0.273396],
    ]
}
