/// The fields a comparison grades, in the order of ``Comparison/levels``. Level 0 of every field
/// means "missing on either side" and weighs nothing; the others run from the strongest agreement to
/// disagreement.
///
/// A physical address is graded twice: as a whole (`physical`, what ``Comparison/evidence``
/// reports) and by its parts (`house`, `street`, `postalCode`, `locality`, what the model weighs),
/// because the parts go wrong independently (a house number mistyped, a suburb left out) and each
/// part that still agrees is evidence of its own.
public enum MatchField: Int, CaseIterable, Sendable, Codable {
    case firstName, lastName, birthday, location, physical, email, phone, system, handle, gender
    case house, street, postalCode, locality

    /// The key of the field in ``Comparison/evidence``.
    public var name: String {
        switch self {
        case .firstName: "first_name"
        case .lastName: "last_name"
        case .birthday: "birthday"
        case .location: "location"
        case .physical: "physical"
        case .email: "email"
        case .phone: "phone"
        case .system: "system"
        case .handle: "handle"
        case .gender: "gender"
        case .house: "house_number"
        case .street: "street"
        case .postalCode: "postal_code"
        case .locality: "locality"
        }
    }

    /// Whether the field is named in ``Comparison/evidence``: the parts of a physical address are
    /// reported as `physical`, as a whole.
    var isReported: Bool { rawValue < MatchField.house.rawValue }

    /// What each level from 1 on means, and how it reads in ``Comparison/evidence``.
    public var levels: [(meaning: String, evidence: String)] {
        switch self {
        case .firstName, .lastName:
            [
                ("same name", "exact"), ("same common name", "exact"),
                (
                    self == .firstName
                        ? "nickname of one formal name, or one name within the other" : "one name within the other", "agree"
                ),
                ("a typo apart or same sound", "similar"), ("alike, or an initial", "similar"), ("different", "disagree"),
            ]
        case .birthday:
            [
                ("same date", "exact"), ("same month and day, year missing on one side", "agree"),
                ("same year, day missing on one side", "agree"), ("a typo apart or day and month swapped", "similar"),
                ("different", "disagree"),
            ]
        case .location: [("same", "exact"), ("alike", "similar"), ("different", "disagree")]
        case .physical:
            [
                ("same", "exact"), ("mostly the same words", "agree"), ("some words in common", "similar"),
                ("the same only through an address marked removed", "similar"), ("different", "disagree"),
            ]
        case .email, .phone:
            [
                ("same", "exact"), ("same, marked removed on one side", "agree"),
                (self == .email ? "same mailbox name or a typo apart" : "same last seven digits or a typo apart", "similar"),
                ("different", "disagree"),
            ]
        case .system, .handle:
            [("same", "exact"), ("same, marked removed on one side", "agree"), ("different", "disagree")]
        case .gender: [("same", "agree"), ("different", "disagree")]
        case .house: [("same", "exact"), ("different", "disagree")]
        case .street: [("same", "exact"), ("a typo or two apart", "similar"), ("different", "disagree")]
        case .postalCode: [("same", "exact"), ("a digit wrong or two swapped", "similar"), ("different", "disagree")]
        case .locality:
            [
                ("every part of the shorter the same", "exact"), ("every part of the shorter the same or a typo apart", "agree"),
                ("some parts in common", "similar"), ("nothing in common", "disagree"),
            ]
        }
    }

    public var levelCount: Int {
        switch self {
        case .firstName, .lastName: 6
        case .birthday, .physical: 5
        case .email, .phone, .locality: 4
        case .location, .system, .handle, .street, .postalCode: 3
        case .gender, .house: 2
        }
    }

    /// The evidence word of each level (index 0: missing), looked up for every reported pair.
    static let evidenceWords: [[String]] = allCases.map { [""] + $0.levels.map(\.evidence) }
}
