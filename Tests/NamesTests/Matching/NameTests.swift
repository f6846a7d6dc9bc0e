import Foundation
import NameMatching
import Testing

@Suite struct NameTests {
    @Test func foldingDropsCaseAccentsAndPunctuation() {
        #expect(NameFolding.fold("José") == "jose")
        #expect(NameFolding.fold("Müller") == "muller")
        #expect(NameFolding.fold("O'Brien") == "obrien")
        #expect(NameFolding.fold("O’Brien") == "obrien")
        #expect(NameFolding.fold("Jean-Luc") == "jean luc")
        #expect(NameFolding.fold("  SMITH,  Jr. ") == "smith jr")
        #expect(NameFolding.fold("Łukasz Ørsted") == "lukasz orsted")
        #expect(NameFolding.fold("Straße") == "strasse")
        #expect(NameFolding.words("Dr. John Smith Jr.") == ["john", "smith"])
    }

    @Test func namesInOtherScriptsKeepTheirLetters() {
        #expect(NameFolding.fold("Иванов") == "иванов")
        #expect(NameFolding.fold("王小明") == "王小明")
        #expect(NameFolding.fold("محمد") == "محمد")
        #expect(NameFolding.latinized("иванов") == "ivanov")
        #expect(NameFolding.latinized("smith") == nil)
    }

    @Test func nameOrderIsReadFromCommasAndWholeNames() {
        let comma = MatchFeatures(PersonRecord(firstName: "Smith, John"))
        #expect(comma.foldedFirstName == "john")
        #expect(comma.foldedLastName == "smith")
        let whole = MatchFeatures(PersonRecord(firstName: "John Smith"))
        #expect(whole.foldedFirstName == "john")
        #expect(whole.foldedLastName == "smith")
        let chinese = MatchFeatures(PersonRecord(firstName: "王小明"))
        #expect(chinese.foldedFirstName == "王小明")
        #expect(chinese.foldedLastName == nil)
    }

    @Test(arguments: [
        ("bob", "robert"), ("bobby", "robert"), ("rob", "robert"), ("robbie", "robert"), ("bill", "william"),
        ("will", "william"), ("billy", "william"), ("liz", "elizabeth"), ("beth", "elizabeth"), ("betsy", "elizabeth"),
        ("eliza", "elizabeth"), ("peggy", "margaret"), ("maggie", "margaret"), ("meg", "margaret"), ("peg", "margaret"),
        ("dick", "richard"), ("jim", "james"), ("jimmy", "james"), ("kate", "katherine"), ("katie", "catherine"),
        ("kathy", "katherine"), ("tony", "anthony"), ("chuck", "charles"), ("charlie", "charles"), ("sandy", "alexander"),
        ("sandy", "sandra"), ("ted", "edward"), ("ted", "theodore"), ("catherine", "katherine"),
    ])
    func nicknamesMeetTheirFormalNames(nickname: String, formal: String) {
        #expect(Nicknames.equivalent(nickname, formal))
        #expect(Nicknames.equivalent(formal, nickname))
    }

    @Test func unrelatedNamesAreNotNicknames() {
        #expect(!Nicknames.equivalent("bob", "william"))
        #expect(!Nicknames.equivalent("peggy", "elizabeth"))
        #expect(Nicknames.formalNames("zebulon") == ["zebulon"])
        #expect(Nicknames.count >= 300)
    }

    @Test func jaroWinklerKnownValues() {
        #expect(abs(StringSimilarity.jaroWinkler("MARTHA", "MARHTA") - 0.961) < 0.001)
        #expect(abs(StringSimilarity.jaroWinkler("DWAYNE", "DUANE") - 0.84) < 0.001)
        #expect(abs(StringSimilarity.jaroWinkler("DIXON", "DICKSONX") - 0.813) < 0.001)
        #expect(StringSimilarity.jaroWinkler("SMITH", "SMITH") == 1)
        #expect(StringSimilarity.jaroWinkler("ABC", "XYZ") == 0)
        #expect(StringSimilarity.jaroWinkler("Иванов", "Иванова") > 0.9)
    }

    @Test func editDistanceCountsSwapsAsOne() {
        #expect(StringSimilarity.editDistance("smith", "smiht") == 1)
        #expect(StringSimilarity.editDistance("smith", "smyth") == 1)
        #expect(StringSimilarity.editDistance("smith", "smithe") == 1)
        #expect(StringSimilarity.editDistance("kitten", "sitting") == 3)
        #expect(StringSimilarity.editDistance("", "abc") == 3)
    }
}
