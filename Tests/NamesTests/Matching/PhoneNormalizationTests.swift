import NameMatching
import Testing

@Suite struct PhoneNormalizationTests {
    private func phone(_ value: String, _ region: String) throws(NormalizationError) -> String {
        try AddressNormalizer.normalize(type: "phone", value: value, defaultRegion: region)
    }

    private func reason(_ value: String, _ region: String) -> String? {
        do {
            _ = try phone(value, region)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test(arguments: [
        // National numbers lose their trunk prefix.
        ("020 7946 0958", "GB", "+442079460958"),
        ("07700 900123", "GB", "+447700900123"),
        ("030 1234567", "DE", "+49301234567"),
        ("0171 1234567", "DE", "+491711234567"),
        ("06 12 34 56 78", "FR", "+33612345678"),
        ("8 (495) 123-45-67", "RU", "+74951234567"),
        ("812 123 4567", "RU", "+78121234567"),
        ("1 (415) 555-0123", "US", "+14155550123"),
        ("(415) 555-0123", "US", "+14155550123"),
        ("415.555.0123", "US", "+14155550123"),
        ("416-555-0199", "CA", "+14165550199"),
        ("098765 43210", "IN", "+919876543210"),
        ("0412 345 678", "AU", "+61412345678"),
        ("090-1234-5678", "JP", "+819012345678"),
        ("010-1234-5678", "KR", "+821012345678"),
        ("0812-3456-789", "ID", "+628123456789"),
        ("0300 1234567", "PK", "+923001234567"),
        ("0803 123 4567", "NG", "+2348031234567"),
        ("(11) 91234-5678", "BR", "+5511912345678"),
        ("0 21 11 91234-5678", "BR", "+5511912345678"),
        ("01712-345678", "BD", "+8801712345678"),
        ("55 1234 5678", "MX", "+525512345678"),
        ("0911 234 567", "ET", "+251911234567"),
        ("0917 123 4567", "PH", "+639171234567"),
        ("0100 123 4567", "EG", "+201001234567"),
        ("0912 345 678", "VN", "+84912345678"),
        ("0812 345 678", "CD", "+243812345678"),
        ("0532 123 45 67", "TR", "+905321234567"),
        ("0912 345 6789", "IR", "+989123456789"),
        ("081 234 5678", "TH", "+66812345678"),
        ("06 1234 5678", "IT", "+390612345678"),
        ("312 345 6789", "IT", "+393123456789"),
        ("0754 123 456", "TZ", "+255754123456"),
        ("082 123 4567", "ZA", "+27821234567"),
        ("0712 345678", "KE", "+254712345678"),
        ("300 1234567", "CO", "+573001234567"),
        ("612 34 56 78", "ES", "+34612345678"),
        ("011 4123-4567", "AR", "+541141234567"),
        ("06 12345678", "NL", "+31612345678"),
        ("06 20 123 4567", "HU", "+36201234567"),
        ("138 0013 8000", "CN", "+8613800138000"),
        ("tel:+44-20-7946-0958", "US", "+442079460958"),
    ])
    func nationalAndInternationalNumbers(value: String, region: String, expected: String) throws {
        #expect(try phone(value, region) == expected)
    }

    @Test func internationalPrefixesOfTheRegion() throws {
        #expect(try phone("011 44 20 7946 0958", "US") == "+442079460958")
        #expect(try phone("00 49 30 1234567", "FR") == "+49301234567")
        #expect(try phone("0011 44 20 7946 0958", "AU") == "+442079460958")
        #expect(try phone("810 44 20 7946 0958", "RU") == "+442079460958")
        #expect(try phone("010 1 415 555 0123", "JP") == "+14155550123")
        // The (0) people write after a country code is the trunk prefix.
        #expect(try phone("+44 (0)20 7946 0958", "US") == "+442079460958")
        // Countries outside the table are accepted by E.164's limits alone.
        #expect(try phone("+376 312 345", "GB") == "+376312345")
    }

    @Test func badNumbersSayWhy() {
        #expect(reason("+44 20 79", "US") == "phone number is too short for +44")
        #expect(reason("020 7946 0958 1234", "GB") == "phone number is too long for +44")
        #expect(reason("+999 1234 5678", "US") == "unknown country calling code +999")
        #expect(reason("555 CALL NOW", "US") == "phone number contains letters")
        #expect(reason("555-0123", "US") == "phone number is too short for +1")
        #expect(reason("020 7946 0958", "XX")?.hasPrefix("unknown region \"XX\"") == true)
        #expect(reason("  ", "US") == "phone address is empty")
        #expect(reason("+1 415 + 555", "US") != nil)
        #expect(reason("415#555#0123", "US") != nil)
    }

    @Test func knownRegions() {
        for region in [
            "CN", "IN", "US", "ID", "PK", "NG", "BR", "BD", "RU", "MX", "JP", "ET", "PH", "EG", "VN", "CD", "TR",
            "IR", "DE", "TH", "GB", "FR", "IT", "TZ", "ZA", "KE", "KR", "CO", "ES", "AR", "CA", "AU", "NL", "gb",
        ] {
            #expect(AddressNormalizer.isKnownRegion(region), "\(region)")
        }
        #expect(!AddressNormalizer.isKnownRegion("XX"))
        #expect(!AddressNormalizer.isKnownRegion(""))
        #expect(AddressNormalizer.knownRegions.count >= 40)
    }
}
