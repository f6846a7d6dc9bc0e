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

// The standard model's parameters: `u` from random pairs and EM on the candidate pairs of 10,000 synthetic records (seed 1). To regenerate them, run
// `NAMES_PRINT_MODEL=1 swift test --filter printStandardParameters` (it prints
// `MatchModel.estimatedOnSyntheticData().swiftSource`) and paste its output over this enum.
enum StandardParameters {
    static let prior = 0.230467
    static let duplicatesPerRecord = 0.988425
    static let recordCount = 1000
    static let calibration = [0.708662, 0.110018]
    static let m: [[Double]] = [
        [
            0.481733, 0.160404, 0.0496986, 0.119594, 0.0288177, 0.0100339, 0.0121856, 0.00522138, 0.000738376, 0.103182,
            0.0118872, 0.0165046,
        ],
        [0.715502, 0.0707007, 0.125065, 0.0738408, 0.0148907],
        [0.815515, 0.0562814, 0.128204],
        [0.268439, 0.386254, 0.102743, 0.0627971, 0.179766],
        [0.798293, 0.0526758, 0.0119831, 0.137048],
        [0.798206, 0.0525181, 0.0154003, 0.133875],
        [0.904283, 0.0956165, 9.99901e-05],
        [0.914066, 0.0858343, 9.99901e-05],
        [0.9999, 0.0001],
    ]
    static let u: [[Double]] = [
        [
            6.0129e-05, 4.0086e-05, 5.01075e-06, 2.50537e-05, 3.00645e-05, 2.0043e-05, 0.00591769, 0.00169363, 0.00859343,
            0.000516107, 0.000566215, 0.982533,
        ],
        [9.11794e-05, 0.000329649, 0.00173241, 0.0228229, 0.975024],
        [0.00824652, 0.00105329, 0.9907],
        [6.14351e-05, 0.00012287, 0.00176114, 3.07176e-05, 0.998024],
        [9.24953e-05, 4.99995e-06, 4.99995e-06, 0.999898],
        [8.47513e-05, 2.82504e-05, 4.99998e-06, 0.999882],
        [0.000450448, 4.99998e-06, 0.999545],
        [4.99995e-06, 4.99995e-06, 0.99999],
        [0.502149, 0.497851],
    ]
    static let candidateU: [[Double]] = [
        [
            0.0679337, 0.0361765, 0.0112057, 0.0284358, 0.0319415, 0.0115498, 0.370861, 0.0835615, 0.123099, 0.0228556,
            0.00693336, 0.205446,
        ],
        [0.109082, 0.000204994, 0.0415155, 0.0282169, 0.820981],
        [0.260217, 0.00240323, 0.73738],
        [0.0664209, 0.115195, 0.0516016, 0.0173455, 0.749437],
        [0.000304016, 9.99932e-05, 0.000904696, 0.998691],
        [0.0115165, 0.00109889, 0.000525506, 0.986859],
        [0.000229051, 9.9991e-05, 0.999671],
        [9.999e-05, 9.999e-05, 0.9998],
        [0.753777, 0.246223],
    ]
}
