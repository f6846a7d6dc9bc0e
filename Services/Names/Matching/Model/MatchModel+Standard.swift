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
    static let prior = 0.108071
    static let duplicatesPerRecord = 1.04327
    static let recordCount = 10000
    static let calibration = [0.650172, -1.04192]
    static let m: [[Double]] = [
        [0.357631, 0.254377, 0.0520688, 0.123525, 0.028337, 0.0102703, 0.0253495, 0.00420446, 0.107306, 0.00818932, 0.0287423],
        [0.71755, 0.0616543, 0.132904, 0.0749617, 0.0129297],
        [0.82169, 0.0523996, 0.125911],
        [0.280696, 0.448637, 0.034877, 0.0559603, 0.179829],
        [0.750016, 0.0654277, 0.0190724, 0.165484],
        [0.750623, 0.0652561, 0.0110691, 0.173051],
        [0.90996, 0.0899399, 9.99911e-05],
        [0.91952, 0.0803797, 9.99906e-05],
        [0.999776, 0.000223924],
    ]
    static let u: [[Double]] = [
        [
            3.00657e-05, 5.01095e-05, 1.00219e-05, 3.50766e-05, 3.50766e-05, 1.00219e-05, 0.0100319, 0.00937047, 0.000701533,
            0.000571248, 0.979154,
        ],
        [8.92495e-05, 0.000137307, 0.00180559, 0.0248938, 0.973074],
        [0.0297079, 0.00166862, 0.968623],
        [4.99995e-06, 6.12689e-05, 0.000285921, 4.99995e-06, 0.999643],
        [9.29746e-05, 1.16218e-05, 1.16218e-05, 0.999884],
        [8.55533e-05, 4.99995e-06, 4.99995e-06, 0.999904],
        [0.000426983, 4.99998e-06, 0.999568],
        [4.99995e-06, 4.99995e-06, 0.99999],
        [0.499246, 0.500754],
    ]
    static let candidateU: [[Double]] = [
        [0.0291447, 0.0266623, 0.00941175, 0.0217075, 0.0340014, 0.0148351, 0.584603, 0.178724, 0.016675, 0.0036566, 0.0805783],
        [0.0366727, 0.000133504, 0.0270886, 0.0280262, 0.908079],
        [0.296643, 0.00138431, 0.701973],
        [0.00918999, 0.0158202, 0.060797, 0.00187705, 0.912316],
        [9.99926e-05, 9.99926e-05, 0.00338884, 0.996411],
        [0.00273498, 9.99952e-05, 0.000158627, 0.997006],
        [9.999e-05, 9.999e-05, 0.9998],
        [9.999e-05, 9.999e-05, 0.9998],
        [0.6622, 0.3378],
    ]
}
