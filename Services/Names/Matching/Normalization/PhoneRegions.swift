/// What the normaliser knows of one region's numbering: enough to read a number written there and to
/// tell a plausible length from a mistyped one, nothing about area codes or carriers.
struct PhoneRegion: Sendable {
    /// ISO 3166 alpha-2.
    let region: String
    let callingCode: String
    /// Dialled before a national number inside the country and not part of the E.164 number.
    /// `nil` where there is none, or where (as in Italy) the leading 0 belongs to the number.
    let trunkPrefix: String?
    /// What a caller in the region dials before a country calling code (besides `+`).
    let internationalPrefixes: [String]
    /// Lengths of the national significant number (without the trunk prefix), as a range.
    let lengths: ClosedRange<Int>
    /// Digits of a carrier selection code that may follow the trunk prefix (Brazil: `0 xx 11 …`).
    var carrierCodeDigits = 0

    init(
        _ region: String, _ callingCode: String, trunk: String?, international: [String] = ["00"],
        _ lengths: ClosedRange<Int>, carrierCodeDigits: Int = 0
    ) {
        self.region = region
        self.callingCode = callingCode
        self.trunkPrefix = trunk
        self.internationalPrefixes = international
        self.lengths = lengths
        self.carrierCodeDigits = carrierCodeDigits
    }
}

enum PhoneRegions {
    // The 30 most populous countries first, then others often seen in contact books. Lengths are
    // the ranges of fixed and mobile numbers in the ITU/national plans, not of short or premium codes.
    static let all: [PhoneRegion] = [
        PhoneRegion("CN", "86", trunk: "0", 7...11),
        PhoneRegion("IN", "91", trunk: "0", 10...10),
        PhoneRegion("US", "1", trunk: "1", international: ["011"], 10...10),
        PhoneRegion("ID", "62", trunk: "0", international: ["001", "007", "008", "009"], 7...12),
        PhoneRegion("PK", "92", trunk: "0", 9...10),
        PhoneRegion("NG", "234", trunk: "0", international: ["009"], 8...10),
        PhoneRegion(
            "BR", "55", trunk: "0", international: ["0014", "0015", "0021", "0023", "0031", "0041", "0043"], 10...11,
            carrierCodeDigits: 2),
        PhoneRegion("BD", "880", trunk: "0", 6...10),
        PhoneRegion("RU", "7", trunk: "8", international: ["810"], 10...10),
        PhoneRegion("MX", "52", trunk: nil, 10...10),
        PhoneRegion("JP", "81", trunk: "0", international: ["010"], 9...10),
        PhoneRegion("ET", "251", trunk: "0", 9...9),
        PhoneRegion("PH", "63", trunk: "0", 6...10),
        PhoneRegion("EG", "20", trunk: "0", 8...10),
        PhoneRegion("VN", "84", trunk: "0", 9...10),
        PhoneRegion("CD", "243", trunk: "0", 7...10),
        PhoneRegion("TR", "90", trunk: "0", 10...10),
        PhoneRegion("IR", "98", trunk: "0", 6...10),
        PhoneRegion("DE", "49", trunk: "0", 5...13),
        PhoneRegion("TH", "66", trunk: "0", international: ["001"], 8...9),
        PhoneRegion("GB", "44", trunk: "0", 9...10),
        PhoneRegion("FR", "33", trunk: "0", 9...9),
        PhoneRegion("IT", "39", trunk: nil, 6...12),
        PhoneRegion("TZ", "255", trunk: "0", international: ["000", "005", "006"], 9...9),
        PhoneRegion("ZA", "27", trunk: "0", 9...9),
        PhoneRegion("KE", "254", trunk: "0", international: ["000"], 7...9),
        PhoneRegion("KR", "82", trunk: "0", international: ["001", "002", "005", "006", "008", "00700"], 8...10),
        PhoneRegion("CO", "57", trunk: "0", international: ["009", "007", "005"], 8...10),
        PhoneRegion("ES", "34", trunk: nil, 9...9),
        PhoneRegion("AR", "54", trunk: "0", 10...11),
        PhoneRegion("CA", "1", trunk: "1", international: ["011"], 10...10),
        PhoneRegion("AU", "61", trunk: "0", international: ["0011"], 9...9),
        PhoneRegion("NL", "31", trunk: "0", 9...11),
        PhoneRegion("SA", "966", trunk: "0", 9...9),
        PhoneRegion("AE", "971", trunk: "0", 8...9),
        PhoneRegion("PL", "48", trunk: nil, 9...9),
        PhoneRegion("UA", "380", trunk: "0", 9...9),
        PhoneRegion("SE", "46", trunk: "0", 7...9),
        PhoneRegion("NO", "47", trunk: nil, 8...8),
        PhoneRegion("DK", "45", trunk: nil, 8...8),
        PhoneRegion("FI", "358", trunk: "0", 5...10),
        PhoneRegion("CH", "41", trunk: "0", 9...9),
        PhoneRegion("AT", "43", trunk: "0", 4...13),
        PhoneRegion("BE", "32", trunk: "0", 8...9),
        PhoneRegion("PT", "351", trunk: nil, 9...9),
        PhoneRegion("IE", "353", trunk: "0", 7...10),
        PhoneRegion("NZ", "64", trunk: "0", 8...10),
        PhoneRegion("SG", "65", trunk: nil, international: ["000", "001", "002", "008"], 8...8),
        PhoneRegion("MY", "60", trunk: "0", 8...10),
        PhoneRegion("IL", "972", trunk: "0", international: ["00", "012", "013", "014"], 8...9),
        PhoneRegion("GR", "30", trunk: nil, 10...10),
        PhoneRegion("CZ", "420", trunk: nil, 9...9),
        PhoneRegion("HU", "36", trunk: "06", 8...9),
        PhoneRegion("RO", "40", trunk: "0", 9...9),
        PhoneRegion("CL", "56", trunk: nil, 9...9),
        PhoneRegion("PE", "51", trunk: "0", 8...9),
        PhoneRegion("VE", "58", trunk: "0", 10...10),
        PhoneRegion("EC", "593", trunk: "0", 8...9),
        PhoneRegion("GT", "502", trunk: nil, 8...8),
        PhoneRegion("CU", "53", trunk: "0", international: ["119"], 6...10),
        PhoneRegion("MA", "212", trunk: "0", 9...9),
        PhoneRegion("DZ", "213", trunk: "0", 8...9),
        PhoneRegion("GH", "233", trunk: "0", 9...9),
        PhoneRegion("UG", "256", trunk: "0", international: ["000", "005", "007"], 9...9),
        PhoneRegion("CI", "225", trunk: nil, 10...10),
        PhoneRegion("CM", "237", trunk: nil, 9...9),
        PhoneRegion("AO", "244", trunk: nil, 9...9),
        PhoneRegion("MZ", "258", trunk: nil, 8...9),
        PhoneRegion("SD", "249", trunk: "0", 9...9),
        PhoneRegion("KZ", "7", trunk: "8", international: ["810"], 10...10),
        PhoneRegion("UZ", "998", trunk: nil, 9...9),
        PhoneRegion("HK", "852", trunk: nil, international: ["001"], 8...8),
        PhoneRegion("TW", "886", trunk: "0", international: ["002", "005", "006", "007", "009", "019"], 8...9),
        PhoneRegion("IQ", "964", trunk: "0", 8...10),
        PhoneRegion("AF", "93", trunk: "0", 9...9),
        PhoneRegion("NP", "977", trunk: "0", 8...10),
        PhoneRegion("LK", "94", trunk: "0", 9...9),
        PhoneRegion("MM", "95", trunk: "0", 6...10),
    ]

    static let byRegion: [String: PhoneRegion] = Dictionary(all.map { ($0.region, $0) }, uniquingKeysWith: { a, _ in a })

    /// The regions of each calling code in the table (`1` and `7` have several).
    static let byCallingCode: [String: [PhoneRegion]] = Dictionary(grouping: all, by: \.callingCode)

    /// Every country calling code assigned by the ITU (E.164), including those the table above has
    /// no lengths for: they are accepted with only E.164's overall limits. The codes are prefix-free,
    /// which is what lets a number be split without knowing its country.
    static let assignedCallingCodes: Set<String> = {
        var codes: Set<String> = ["1", "7"]
        let two =
            "20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98"
        let three = """
            211 212 213 216 218 220 221 222 223 224 225 226 227 228 229 230 231 232 233 234 235 236 237 238 239 240 241 242 \
            243 244 245 246 247 248 249 250 251 252 253 254 255 256 257 258 260 261 262 263 264 265 266 267 268 269 290 291 \
            297 298 299 350 351 352 353 354 355 356 357 358 359 370 371 372 373 374 375 376 377 378 379 380 381 382 383 385 \
            386 387 389 420 421 423 500 501 502 503 504 505 506 507 508 509 590 591 592 593 594 595 596 597 598 599 670 672 \
            673 674 675 676 677 678 679 680 681 682 683 685 686 687 688 689 690 691 692 800 808 850 852 853 855 856 870 878 \
            880 881 882 883 886 888 960 961 962 963 964 965 966 967 968 970 971 972 973 974 975 976 977 979 992 993 994 995 \
            996 998
            """
        for code in (two + " " + three).split(separator: " ") { codes.insert(String(code)) }
        return codes
    }()
}
