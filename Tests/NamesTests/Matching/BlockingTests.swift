import NameMatching
import Testing

@Suite struct BlockingTests {
    private let original = PersonRecord(
        firstName: "Margaret", lastName: "Thistlewood",
        addresses: [
            MatchAddress(type: "email", value: "mthistle@example.org"), MatchAddress(type: "phone", value: "+442079460958"),
            MatchAddress(type: "physical", value: "14 Orchard Lane, York"),
        ], birthday: "1971-03-09", location: "York")

    /// The original with one field wrong: each must still be a candidate pair with it.
    private var variants: [(String, PersonRecord)] {
        var list: [(String, PersonRecord)] = []
        func variant(_ name: String, _ change: (inout PersonRecord) -> Void) {
            var record = original
            change(&record)
            list.append((name, record))
        }
        variant("first name typo") { $0.firstName = "Magraret" }
        variant("nickname") { $0.firstName = "Peggy" }
        variant("first initial") { $0.firstName = "M." }
        variant("last name typo") { $0.lastName = "Thistelwood" }
        variant("last name changed") { $0.lastName = "Okafor" }
        variant("names swapped") { ($0.firstName, $0.lastName) = ($0.lastName, $0.firstName) }
        variant("birthday typo") { $0.birthday = "1971-03-19" }
        variant("birthday missing") { $0.birthday = nil }
        variant("moved") {
            $0.location = "Leeds"
            $0.addresses[2].value = "3 Station Road, Leeds"
        }
        variant("new e-mail and phone") {
            $0.addresses[0].value = "maggie.t@mail.com"
            $0.addresses[1].value = "+447700900123"
        }
        variant("no addresses at all") { $0.addresses = [] }
        variant("e-mail at another domain") { $0.addresses[0].value = "mthistle@gmail.com" }
        return list
    }

    @Test func aTypoInAnyOneFieldDoesNotHideAPair() {
        let others = (0..<100).map { index in
            PersonRecord(
                firstName: ["Mary", "Margaret", "Maria"][index % 3], lastName: "Smith\(index)",
                birthday: "1971-03-0\(index % 9 + 1)",
                location: "York")
        }
        for (name, variant) in variants {
            let records = ([original, variant] + others).map(MatchFeatures.init)
            let pairs = Deduplicator().pairs(in: records, minProbability: 0)
            #expect(pairs.contains { $0.a == 0 && $0.b == 1 }, "\(name)")
            let between = Deduplicator().pairs(between: [records[1]], and: records, minProbability: 0)
            #expect(between.contains { $0.a == 0 && $0.b == 0 }, "\(name)")
        }
    }

    /// A record typed again with its names, birthday and house number all wrong still meets the
    /// first through its postal code and street; a model is estimated without those wide keys.
    @Test func thePostalCodeAndTheStreetAloneStillMeet() {
        let a = PersonRecord(
            firstName: "Sophie", lastName: "Snell",
            addresses: [MatchAddress(type: "physical", value: "4 vaughan garden, arcadia, tas 2372")],
            birthday: "1923-11-14")
        let b = PersonRecord(
            firstName: "Emma", lastName: "Sndl",
            addresses: [MatchAddress(type: "physical", value: "47 vaughan g arden, arcdia, tas 2372")],
            birthday: "1923-11-64")
        let records = [a, b].map(MatchFeatures.init)
        #expect(Deduplicator().pairs(in: records, minProbability: 0).count == 1)
        var estimation = Deduplicator()
        estimation.wideBlocking = false
        #expect(estimation.pairs(in: records, minProbability: 0).isEmpty)
        #expect(records[0].blockingKeys.contains("z:2372"))
        #expect(!records[0].estimationBlockingKeys.contains("z:2372"))
    }

    @Test func keysPerRecordAreBoundedAndSpecific() {
        var busy = original
        busy.addresses += (0..<10).map { MatchAddress(type: "email", value: "m\($0)@example.org") }
        let keys = MatchFeatures(busy).blockingKeys
        #expect(keys.count <= 14)
        #expect(Set(keys).count == keys.count)
        // Nothing as coarse as a bare initial or a bare year.
        #expect(!keys.contains("m"))
        #expect(!keys.contains { $0.hasSuffix(":1971") })
        #expect(MatchFeatures(PersonRecord()).blockingKeys.isEmpty)
    }

    @Test func pairsAreOrderedAndIndexTheirLists() {
        let records = [original, PersonRecord(firstName: "Bob", lastName: "Jones"), original].map(MatchFeatures.init)
        let pairs = Deduplicator().pairs(in: records, minProbability: 0.5)
        #expect(pairs.count == 1)
        #expect(pairs.first?.a == 0 && pairs.first?.b == 2)
        #expect(pairs.allSatisfy { $0.a < $0.b })
        let between = Deduplicator().pairs(between: [records[1], records[0]], and: [records[2]], minProbability: 0.5)
        #expect(between.map { [$0.a, $0.b] } == [[1, 0]])
    }

    @Test func probabilitiesFollowTheNumberOfRecordsUnlessFixed() {
        let pair = [original, original].map(MatchFeatures.init)
        let crowd = pair + (0..<2_000).map { MatchFeatures(PersonRecord(firstName: "P\($0)", lastName: "Q\($0)")) }
        let model = MatchModel.standard
        let small = Deduplicator(model: model).pairs(in: pair, minProbability: 0)[0].probability
        let large = Deduplicator(model: model).pairs(in: crowd, minProbability: 0)[0].probability
        #expect(large <= small)
        #expect(
            model.scaled(toRecords: 2_002).logOdds(Comparison.compare(pair[0], pair[1]))
                < model.logOdds(Comparison.compare(pair[0], pair[1])))
        var fixed = Deduplicator(model: model)
        fixed.scalesWithRecords = false
        let a = fixed.pairs(in: pair, minProbability: 0)[0].probability
        let b = fixed.pairs(in: crowd, minProbability: 0)[0].probability
        #expect(a == b)
        #expect(a == model.probability(Comparison.compare(pair[0], pair[1])))
    }

    @Test func componentsJoinPairsAboveTheThreshold() {
        let c = Comparison(levels: [])
        let pairs = [
            ScoredPair(a: 0, b: 1, comparison: c, probability: 0.9), ScoredPair(a: 1, b: 3, comparison: c, probability: 0.8),
            ScoredPair(a: 2, b: 4, comparison: c, probability: 0.3),
        ]
        #expect(Clustering.components(count: 5, pairs: pairs, threshold: 0.5) == [[0, 1, 3], [2], [4]])
        #expect(Clustering.components(count: 5, pairs: pairs, threshold: 0.2) == [[0, 1, 3], [2, 4]])
    }
}
