import Testing

@testable import NameMatching

/// Physical addresses are weighed by their parts, and a shared home of possible relatives by what
/// the app's own records say about it.
@Suite struct AddressPartsTests {
    private func compare(_ a: String, _ b: String) -> Comparison {
        Comparison.compare(
            MatchFeatures(PersonRecord(firstName: "Ann", addresses: [MatchAddress(type: "physical", value: a)])),
            MatchFeatures(PersonRecord(firstName: "Ann", addresses: [MatchAddress(type: "physical", value: b)])))
    }

    @Test func eachPartIsGradedOnItsOwn() {
        // Another house number and a mistyped second line: as a whole "different", by parts mostly the same.
        let c = compare(
            "9 hicks street, loccn 7229, bondi junction, sa 5011", "102 hicks street, loccnn229, bondi junction, sa 5011")
        #expect(c[.physical] == 5)
        #expect(c[.house] == 2)
        #expect(c[.street] == 1)
        #expect(c[.postalCode] == 1)
        #expect(c[.locality] == 2)
        // The parts are the model's, not the caller's: evidence names the address as a whole.
        #expect(c.evidence["physical"] == "disagree")
        #expect(c.evidence["street"] == nil && c.evidence["postal_code"] == nil)
    }

    @Test func aSpaceInTheWrongPlaceOrATypoKeepsTheStreet() {
        #expect(compare("126 macgregors treet, eureka", "126 macgregor street, eureka")[.street] == 1)
        #expect(compare("11 fihellysrteet, greenacre", "63 fihell street, greenacre")[.street] == 2)
        #expect(compare("11 fihell street, greenacre", "11 dumas street, greenacre")[.street] == 3)
        #expect(compare("2 appel crescent, 2160", "2 appel crescent, 2106")[.postalCode] == 2)
        #expect(compare("2 appel crescent, 2160", "2 appel crescent, 3977")[.postalCode] == 3)
        #expect(compare("2 appel crescent, rothwell, barcaldine", "2 appel crescent, tyalgum")[.locality] == 4)
        #expect(compare("2 appel crescent, rothwell, barcaldine", "2 appel crescent, barcaldine")[.locality] == 1)
    }

    @Test func addressesMarkedRemovedAreLeftOutOfTheParts() {
        let a = MatchFeatures(
            PersonRecord(
                firstName: "Ann", addresses: [MatchAddress(type: "physical", value: "1 Main Street, York", removed: true)]))
        let b = MatchFeatures(
            PersonRecord(firstName: "Ann", addresses: [MatchAddress(type: "physical", value: "1 Main Street, York")]))
        let c = Comparison.compare(a, b)
        #expect(c[.physical] == 4)
        #expect(c[.house] == 0 && c[.street] == 0 && c[.locality] == 0)
    }

    /// The same generator with and without relatives: estimated on each store, a shared home of
    /// two records with one last name and other first names says much where families are absent and
    /// little where they live together.
    @Test func anAppsOwnEstimateLearnsWhatASharedHomeOfRelativesSays() {
        func weight(relatives: Double) -> Double {
            var generator = SyntheticPersons(seed: 5)
            generator.relativeShare = relatives
            let model = MatchModel.standard.estimated(from: generator.generate(records: 3_000).features)
            let factor = MatchModel.factors.firstIndex(of: "home of relatives")!
            return model.weight(factor: factor, level: 1)
        }
        let withoutFamilies = weight(relatives: 0)
        let withFamilies = weight(relatives: 0.3)
        #expect(withoutFamilies > withFamilies + 1, "\(withoutFamilies) vs \(withFamilies)")
        // The standard model is the cautious one: it must not join a family in a store it knows nothing of.
        let standard = MatchModel.standard.weight(factor: MatchModel.factors.firstIndex(of: "home of relatives")!, level: 1)
        #expect(standard < withoutFamilies)
    }
}
