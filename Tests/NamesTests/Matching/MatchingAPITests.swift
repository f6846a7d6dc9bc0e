import NameMatching
import Testing

@Suite struct MatchingAPITests {
    @Test func aRecordMatchesItsOwnFeatures() {
        let record = PersonRecord(firstName: "Ada", lastName: "Lovelace")
        #expect(MatchFeatures(record).record == record)
    }
}
