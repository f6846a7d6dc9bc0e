import Foundation
import NameMatching
import Testing

@Suite struct ComparisonTests {
    private func evidence(_ a: PersonRecord, _ b: PersonRecord) -> [String: String] {
        Comparison.compare(MatchFeatures(a), MatchFeatures(b)).evidence
    }

    private let charlie = PersonRecord(
        firstName: "Charlie", lastName: "Smith",
        addresses: [
            MatchAddress(type: "phone", value: "+14155550123"), MatchAddress(type: "email", value: "csmith@domain.com"),
            MatchAddress(type: "physical", value: "12 Main Street, Springfield"),
        ], birthday: "1980-05-17", location: "Springfield", gender: "m")

    @Test func identicalRecordsAgreeExactlyOnEveryField() {
        let all = evidence(charlie, charlie)
        #expect(all["first_name"] == "exact")
        #expect(all["last_name"] == "exact")
        #expect(all["birthday"] == "exact")
        #expect(all["location"] == "exact")
        #expect(all["physical"] == "exact")
        #expect(all["email"] == "exact")
        #expect(all["phone"] == "exact")
        #expect(all["gender"] == "agree")
        #expect(all["system"] == nil)
        #expect(all["handle"] == nil)
    }

    @Test func nicknamesTyposAndPartialDates() {
        var other = PersonRecord(
            firstName: "Charles", lastName: "Smiht",
            addresses: [
                MatchAddress(type: "phone", value: "+14155550124"), MatchAddress(type: "email", value: "csmith@other.org"),
                MatchAddress(type: "physical", value: "12 Main St"),
            ], birthday: "1980", location: "Springfeld", gender: "male")
        var all = evidence(charlie, other)
        #expect(all["first_name"] == "agree")
        #expect(all["last_name"] == "similar")
        #expect(all["birthday"] == "agree")
        #expect(all["location"] == "similar")
        #expect(all["physical"] == "agree")
        #expect(all["email"] == "similar")
        #expect(all["phone"] == "similar")
        #expect(all["gender"] == "agree")
        other.birthday = "1980-05-17"
        #expect(evidence(charlie, other)["birthday"] == "exact")
        other.birthday = "1981-05-17"
        #expect(evidence(charlie, other)["birthday"] == "similar")
        other.birthday = "--05-17"
        #expect(evidence(charlie, other)["birthday"] == "agree")
        other.birthday = "1975-02-03"
        #expect(evidence(charlie, other)["birthday"] == "disagree")
        other.firstName = "Zachary"
        other.gender = "f"
        all = evidence(charlie, other)
        #expect(all["first_name"] == "disagree")
        #expect(all["gender"] == "disagree")
    }

    @Test func dayAndMonthSwappedIsSimilar() {
        let a = PersonRecord(firstName: "Ann", birthday: "1980-05-07")
        let b = PersonRecord(firstName: "Ann", birthday: "1980-07-05")
        #expect(evidence(a, b)["birthday"] == "similar")
    }

    @Test func swappedFirstAndLastNamesAreReadCrosswise() {
        let a = PersonRecord(firstName: "Wojciech", lastName: "Przybylski")
        let b = PersonRecord(firstName: "Przybylski", lastName: "Wojciech")
        let all = evidence(a, b)
        #expect(all["first_name"] == "exact")
        #expect(all["last_name"] == "exact")
    }

    @Test func namesInOtherScriptsCompareByTheirFoldedForm() {
        let a = PersonRecord(firstName: "Иван", lastName: "Иванов")
        #expect(evidence(a, PersonRecord(firstName: "ИВАН", lastName: "иванов"))["last_name"] == "exact")
        #expect(evidence(a, PersonRecord(firstName: "Ivan", lastName: "Ivanov"))["last_name"] == "agree")
        #expect(evidence(a, PersonRecord(firstName: "Пётр", lastName: "Петров"))["last_name"] == "disagree")
    }

    @Test func removedAddressesCountAsAWeakerLevel() {
        let a = PersonRecord(firstName: "A", addresses: [MatchAddress(type: "email", value: "a@b.com", removed: true)])
        let b = PersonRecord(firstName: "A", addresses: [MatchAddress(type: "email", value: "a@b.com")])
        let comparison = Comparison.compare(MatchFeatures(a), MatchFeatures(b))
        #expect(comparison.evidence["email"] == "agree")
        #expect(comparison[.email] == 2)
        let model = MatchModel.standard
        #expect(model.weight(.email, level: 2) < model.weight(.email, level: 1))
    }

    @Test func strongAddressesAreSystemOrVerifiedOnBoth() {
        func strong(_ a: MatchAddress, _ b: MatchAddress) -> Bool {
            Comparison.compare(MatchFeatures(PersonRecord(addresses: [a])), MatchFeatures(PersonRecord(addresses: [b])))
                .sharesStrongAddress
        }
        #expect(strong(MatchAddress(type: "system", value: "u1"), MatchAddress(type: "system", value: "u1")))
        #expect(
            strong(
                MatchAddress(type: "email", value: "a@b.co", verified: true),
                MatchAddress(type: "email", value: "a@b.co", verified: true)))
        #expect(
            !strong(MatchAddress(type: "email", value: "a@b.co", verified: true), MatchAddress(type: "email", value: "a@b.co")))
        #expect(!strong(MatchAddress(type: "system", value: "u1"), MatchAddress(type: "system", value: "u2")))
    }

    @Test func handlesCompareWithinTheirType() {
        let a = PersonRecord(addresses: [MatchAddress(type: "twitter", value: "cs")])
        #expect(evidence(a, PersonRecord(addresses: [MatchAddress(type: "twitter", value: "cs")]))["handle"] == "exact")
        #expect(evidence(a, PersonRecord(addresses: [MatchAddress(type: "twitter", value: "cz")]))["handle"] == "disagree")
        #expect(evidence(a, PersonRecord(addresses: [MatchAddress(type: "github", value: "cs")]))["handle"] == nil)
    }

    @Test func comparisonsAndFeaturesRoundTripThroughJSON() throws {
        let comparison = Comparison.compare(MatchFeatures(charlie), MatchFeatures(charlie))
        let decoded = try JSONDecoder().decode(Comparison.self, from: JSONEncoder().encode(comparison))
        #expect(decoded == comparison)
        #expect(Comparison(levels: comparison.levels).levels == comparison.levels)
        let features = MatchFeatures(charlie)
        let data = try JSONEncoder().encode(features)
        let back = try JSONDecoder().decode(MatchFeatures.self, from: data)
        #expect(back == features)
        #expect(back.blockingKeys == features.blockingKeys)
        #expect(data.count < 600)
        let model = try JSONDecoder().decode(MatchModel.self, from: JSONEncoder().encode(MatchModel.standard))
        #expect(model == MatchModel.standard)
    }
}
