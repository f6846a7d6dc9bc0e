/// How two records compare, field by field, as levels of agreement (see ``MatchField``).
public struct Comparison: Hashable, Sendable, Codable {
    /// Four bits per field in ``MatchField`` order, and the strong-address flag in the top bit: one
    /// word, so millions of comparisons cost no allocation and group by pattern cheaply.
    var packed: UInt64

    static let strongAddressBit: UInt64 = 1 << 63

    init(packed: UInt64) { self.packed = packed }

    public init(levels: [Int8]) {
        packed = 0
        for (index, level) in levels.prefix(MatchField.allCases.count).enumerated() {
            self[MatchField.allCases[index]] = level
        }
    }

    /// The level of each field, in ``MatchField`` order (0: missing on either side).
    public var levels: [Int8] {
        get { MatchField.allCases.map { self[$0] } }
        set { self = Comparison(levels: newValue).withStrongAddress(sharesStrongAddress) }
    }

    public subscript(field: MatchField) -> Int8 {
        get { Int8(truncatingIfNeeded: (packed >> UInt64(field.rawValue * 4)) & 0xF) }
        set {
            let shift = UInt64(field.rawValue * 4)
            let level = UInt64(max(0, min(Int(newValue), field.levelCount))) & 0xF
            packed = (packed & ~(0xF << shift)) | (level << shift)
        }
    }

    /// The levels without the strong-address flag: the pattern the model sees.
    var pattern: UInt64 { packed & ~Self.strongAddressBit }

    /// Per field (`first_name`, `last_name`, `birthday`, `location`, `physical`, `email`, `phone`,
    /// `system`, `handle`, `gender`): `exact`, `agree`, `similar` or `disagree`; absent when either
    /// side lacks the field.
    public var evidence: [String: String] {
        var evidence: [String: String] = [:]
        for field in MatchField.allCases where field.isReported {
            let level = Int(self[field])
            if level > 0 { evidence[field.name] = MatchField.evidenceWords[field.rawValue][level] }
        }
        return evidence
    }

    /// An address both records hold that identifies one person: the same `system` address, or the
    /// same address verified on both.
    public var sharesStrongAddress: Bool { packed & Self.strongAddressBit != 0 }

    func withStrongAddress(_ strong: Bool) -> Comparison {
        Comparison(packed: strong ? packed | Self.strongAddressBit : packed & ~Self.strongAddressBit)
    }

    enum CodingKeys: String, CodingKey {
        case levels
        case strongAddress = "strong_address"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(levels: try container.decode([Int8].self, forKey: .levels))
        let strong = try container.decodeIfPresent(Bool.self, forKey: .strongAddress) ?? false
        self = withStrongAddress(strong)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(levels, forKey: .levels)
        if sharesStrongAddress { try container.encode(true, forKey: .strongAddress) }
    }
}
