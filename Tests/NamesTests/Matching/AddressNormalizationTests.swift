import NameMatching
import Testing

@Suite struct AddressNormalizationTests {
    private func normalize(_ type: String, _ value: String) throws(NormalizationError) -> String {
        try AddressNormalizer.normalize(type: type, value: value, defaultRegion: "US")
    }

    private func reason(_ type: String, _ value: String) -> String? {
        do {
            _ = try normalize(type, value)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test func emailIsTrimmedAndLowerCased() throws {
        #expect(try normalize("email", "  Charlie.Smith@Domain.COM ") == "charlie.smith@domain.com")
        #expect(try normalize("email", "mailto:a@b.co") == "a@b.co")
        #expect(reason("email", "charlie") == "e-mail address must contain exactly one \"@\"")
        #expect(reason("email", "a@b@c.com") == "e-mail address must contain exactly one \"@\"")
        #expect(reason("email", "@domain.com") == "e-mail address has nothing before \"@\"")
        #expect(reason("email", "a@localhost") != nil)
        #expect(reason("email", "a@domain.") != nil)
        #expect(reason("email", "a b@domain.com") == "e-mail address contains spaces")
        #expect(reason("email", "   ") != nil)
    }

    @Test func handlesLoseTheirAtAndCase() throws {
        #expect(try normalize("twitter", " @CharlieSmith ") == "charliesmith")
        #expect(try normalize("facebook", "Charlie.Smith.9") == "charlie.smith.9")
        #expect(reason("twitter", "@") == "twitter handle is empty")
        #expect(reason("twitter", "charlie smith") == "twitter handle contains spaces")
    }

    @Test func systemAndPhysicalAreTrimmed() throws {
        #expect(try normalize("system", "  acct-42+app-7 ") == "acct-42+app-7")
        #expect(try normalize("physical", "  12  Main\tStreet,\n Springfield ") == "12 Main Street, Springfield")
        #expect(reason("system", "") == "system address is empty")
        #expect(reason("physical", "   ") == "physical address is empty")
    }

    @Test func addressTypesAreLowerCaseWords() {
        for type in ["email", "phone", "system", "physical", "twitter", "linked_in", "x2"] {
            #expect(AddressNormalizer.isValidType(type), "\(type)")
        }
        for type in ["", "Email", "2fa", "_x", "e-mail", "e mail", "ümlaut", String(repeating: "a", count: 33)] {
            #expect(!AddressNormalizer.isValidType(type), "\(type)")
        }
        #expect(AddressNormalizer.isValidType(String(repeating: "a", count: 32)))
    }
}
